package redis

import (
	"strconv"
	"time"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
)

// config is a Backend's resolved configuration, validated once by New.
type config struct {
	// Prefix starts every key's name, inside its hash tag. Default "r4c:".
	Prefix string
	// Timeout bounds each call to Redis (see the Timeout option). Positive. Default 50ms.
	Timeout time.Duration
	// OnFailure is what limiters do while Redis fails: backend.Local, backend.Admitted or
	// backend.Refused. Default backend.Local.
	OnFailure backend.Verdict
	// ProbeInterval is how long after a failure a node of Redis (or a key whose value is
	// not a TAT) is tried again, on a limiter's clock. Positive. Default 1s.
	ProbeInterval time.Duration
	// Instances is how many instances of the service are expected to share each quota:
	// with Local, each instance's in-process limiter then takes 1/Instances of the quota
	// while Redis fails. At least 1. Default 1: each instance takes the whole quota.
	Instances int
}

// defaultConfig returns the built-in defaults: prefix "r4c:", timeout 50ms, Local, probe
// every 1s, one instance.
func defaultConfig() config {
	return config{Prefix: "r4c:", Timeout: 50 * time.Millisecond, OnFailure: backend.Local, ProbeInterval: time.Second,
		Instances: 1}
}

// validate checks the configuration and returns a *policy.ConfigError: R4C-ATR-004 for a
// negative Timeout or ProbeInterval, R4C-ATR-007 for a zero one, an OnFailure other than
// Local, Admitted and Refused, or Instances below 1.
func (c config) validate() error {
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"redis.timeout", c.Timeout}, {"redis.probeInterval", c.ProbeInterval}} {
		switch {
		case d.v < 0:
			return r4c.Errorf(r4c.NegativeDuration, d.key, d.v.String(), "must not be negative")
		case d.v == 0:
			return r4c.Errorf(r4c.OutOfRange, d.key, d.v.String(), "must be positive")
		}
	}
	switch c.OnFailure {
	case backend.Local, backend.Admitted, backend.Refused:
	default:
		return r4c.Errorf(r4c.OutOfRange, "redis.onFailure", "Verdict("+strconv.Itoa(int(c.OnFailure))+")",
			"must be backend.Local, backend.Admitted or backend.Refused")
	}
	if c.Instances < 1 {
		return r4c.Errorf(r4c.OutOfRange, "redis.instances", strconv.Itoa(c.Instances), "must be at least 1")
	}
	return nil
}

// Option configures a Backend. New applies the options in order over the defaults and
// skips nil ones.
type Option func(*config)

// Prefix sets the prefix of every key's name: the key of limiter "geocoding" is
// "{" + p + "geocoding}". Default "r4c:". Services that must not share quotas under equal
// names use different prefixes.
func Prefix(p string) Option { return func(c *config) { c.Prefix = p } }

// Timeout bounds each round trip to Redis: a script run that Redis has not answered by
// then takes the failure policy for each call it carries. A call queued behind another
// call of its limiter (or key) waits for that one's round trip too (see the package
// documentation, under Failures). Default 50ms. Negative fails with R4C-ATR-004,
// zero with R4C-ATR-007. With a client that has ContextTimeoutEnabled, the limiter's own
// calls (those that carry no context of the caller, such as TryAcquire) send and read
// with exactly this deadline, and share the timer that ends them per 1/16 of it (at most
// 1ms), so that a call allocates no timer of its own: their waits that no socket deadline
// bounds, such as the wait for a free connection of the client's pool, may so end up to
// Timeout/16 (at most 1ms) sooner than the timeout, never later.
func Timeout(d time.Duration) Option { return func(c *config) { c.Timeout = d } }

// OnFailure sets what limiters do while Redis is unreachable or too slow, as the verdict
// their stores give each call then:
//   - backend.Local (the default) decides with an in-process limiter of the same
//     configuration: each process limits itself, as every limiter does without a backend
//     (Instances gives each a fair share of the quota instead);
//   - backend.Admitted lets every call pass, reserving nothing (fail open);
//   - backend.Refused refuses every call with the limiter's rejection (matching
//     ratelimit.ErrExceeded), the retry-after being the emission interval T (fail closed).
//
// Another value fails New with R4C-ATR-007.
func OnFailure(v backend.Verdict) Option { return func(c *config) { c.OnFailure = v } }

// ProbeInterval sets how long after a failure a node of Redis is tried again: while a
// node is down, one call per interval tries it, whatever its limiter or key (the health
// is the node's); the others whose keys the node holds take the failure policy at once. A
// key whose value is not a TAT is tried again as often, by its own calls. Default 1s.
// Negative fails with R4C-ATR-004, zero with R4C-ATR-007. It is measured on a limiter's
// clock: a node's outage on the clock of the limiter that found it, a key's on the clock
// of the key's limiter. With a registry's manual clock, Redis is tried again only as the test
// advances the clock.
func ProbeInterval(d time.Duration) Option { return func(c *config) { c.ProbeInterval = d } }

// Instances sets how many instances of the service are expected to share each quota, N,
// for a fair local share: with backend.Local, while Redis fails, each instance's
// in-process limiter takes Permits/N of the quota per Period instead of all of it, so that
// N instances together stay near the shared quota. A local limiter then lets one permit
// through every N·T, with a burst of Permits/N (rounded down, at least 1); a call for more
// permits than that burst passes when the local bucket is full, and the bucket then owes
// the rest. Over any time d, N instances so admit at most the shared quota, Permits + d/T,
// plus N local bursts (with weighted calls, N times the largest of the burst and the
// calls' weights), where without a share they could admit N times the quota. The cost is
// the other side of the same bargain: when fewer than N instances run, they admit less
// than the quota while Redis is down (one instance of 3 expected, a third of it). It has
// no effect with another failure policy, nor while Redis answers. Default 1: each instance
// takes the whole quota. Below 1 fails with R4C-ATR-007.
func Instances(n int) Option { return func(c *config) { c.Instances = n } }
