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
	// Heartbeat is how long an instance's announcement lives in Redis (see the Heartbeat
	// option); 0: no heartbeat. Default 0.
	Heartbeat time.Duration
	// Lease is the life of a lease (see Leases); 0: no leases. Default 0.
	Lease time.Duration
}

// defaultConfig returns the built-in defaults: prefix "r4c:", timeout 50ms, Local, probe
// every 1s, one instance.
func defaultConfig() config {
	return config{Prefix: "r4c:", Timeout: 50 * time.Millisecond, OnFailure: backend.Local, ProbeInterval: time.Second,
		Instances: 1}
}

// validate checks the configuration and returns a *policy.ConfigError: R4C-ATR-004 for a
// negative Timeout, ProbeInterval, Heartbeat or lease life, R4C-ATR-007 for a zero Timeout
// or ProbeInterval, an OnFailure other than Local, Admitted and Refused, Instances below 1,
// or a Heartbeat below 4·Timeout or 4ms.
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
	if c.Lease < 0 {
		return r4c.Errorf(r4c.NegativeDuration, "redis.leases", c.Lease.String(), "must not be negative")
	}
	if c.Instances < 1 {
		return r4c.Errorf(r4c.OutOfRange, "redis.instances", strconv.Itoa(c.Instances), "must be at least 1")
	}
	return c.validateHeartbeat()
}

// Option configures a Backend. New applies the options in order over the defaults and
// skips nil ones.
type Option func(*config)

// Prefix sets the prefix of every key's name: the key of limiter "geocoding" is
// "{" + p + "geocoding}". Default "r4c:". Services that must not share quotas under equal
// names use different prefixes.
//
// Two keys per limiter name. The TAT key is "{" + prefix + name + "}", e.g.
// {r4c:geocoding} with the default prefix "r4c:". Its value is the TAT as a decimal count
// of nanoseconds since the Unix epoch on the server's clock, then the rate it is written
// at and the count of its conversions (see New), one space apart: T in nanoseconds,
// Permits, and the count, e.g. "1767225600100000000 100000000 10 0" (a bare TAT, as
// earlier versions wrote it, is still read); its TTL is the time until the burst is full
// again (the TAT, rounded up to a millisecond), so an idle limiter leaves no key behind
// and an absent key means a full burst. The freed-slots key is the TAT key followed by
// ":freed", e.g. {r4c:geocoding}:freed: it exists only while a canceled reservation's
// slot is free, and holds the freed slots as "start-end" pairs one space apart, each time
// in seconds since the Unix epoch with exactly 9 decimals (e.g.
// "1767225600.250000000-1767225600.750000000"), sorted, each ending before the TAT; its
// TTL is the time until the last one ends. The script reads it only while the TAT is
// ahead of now, and deletes it when it takes a permit with no TAT key (whatever it
// holds). A limiter with further windows (ratelimit.Windows) has one more key per window:
// the TAT key followed by ":win:<permits>:<period in nanoseconds>", e.g.
// {r4c:geocoding}:win:1000:86400000000000 for 1000/24h, which holds that window's TAT as
// a bare decimal count of nanoseconds, with the same TTL rule; it is named by the
// window's rate, so a change of Windows keeps the TAT of each window it keeps and a new
// window starts with its whole burst free. Each script touches exactly those keys, and
// the braces make the TAT key their Redis Cluster hash tag, so all are in one slot and
// the layout works unchanged on a cluster (see New).
func Prefix(p string) Option { return func(c *config) { c.Prefix = p } }

// Timeout bounds each round trip to Redis: a script run that Redis has not answered by
// then takes the failure policy for each call it carries. No round trip waits for Redis
// longer than the timeout, whatever the client's own timeouts; when Redis did not answer
// in time, the event's Err matches context.DeadlineExceeded (see OnFailure). A call that
// finds another call of its limiter (or key) in flight waits for that one's round trip
// before its own goes (see New), so it may wait up to about twice the timeout, and more
// behind a queue of over 64 calls. Default 50ms. Negative fails with R4C-ATR-004,
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
//
// When Redis fails or answers too late (Timeout), the limiter publishes
// backend.EventFailed and applies the failure policy until Redis answers again (see
// ProbeInterval for the health of each node). Redis's failures are a refused or dropped
// connection, a timeout, and every error reply other than the data errors below (e.g.
// LOADING, READONLY, OOM or BUSY).
//
// A data error is one limiter's keys', not Redis's: a key holds another type (Redis
// answers WRONGTYPE), the TAT key a string that is not a TAT (1 to 24 decimal digits; the
// script answers BADTAT), or the freed-slots key, while it is read, a string that is not
// freed slots as Prefix describes them (at most 16, each start before its end, each end
// before the next start, seconds below 10^12; the script answers BADSLOTS). The script
// then writes nothing. Redis answered, so every other limiter and key stays on Redis, and
// neither backend.EventFailed nor backend.EventRecovered is published. Only that
// limiter's calls apply the failure policy; it publishes backend.EventKeyFailed, with Key
// its TAT key (e.g. {r4c:geocoding}) and Err the error, which names the key at fault,
// once until its keys answer well again. While they are bad, one of its calls per
// ProbeInterval tries them again, the others take the failure policy at once. The values
// are never overwritten: once the key at fault is deleted (a missing TAT key is a full
// burst, a missing freed-slots key no freed slot) or holds a valid value again, the
// limiter is back on Redis, without an event.
func OnFailure(v backend.Verdict) Option { return func(c *config) { c.OnFailure = v } }

// ProbeInterval sets how long after a failure a node of Redis is tried again: while a
// node is down, one call per interval tries it, whatever its limiter or key (the health
// is the node's); the others whose keys the node holds take the failure policy at once. A
// key whose value is not a TAT is tried again as often, by its own calls. Default 1s.
// Negative fails with R4C-ATR-004, zero with R4C-ATR-007. It is measured on a limiter's
// clock: a node's outage on the clock of the limiter that found it, a key's on the clock
// of the key's limiter. With a registry's manual clock, Redis is tried again only as the test
// advances the clock.
//
// Health follows the unit that fails: the node that holds a limiter's keys. For a
// *redis.Client that is its server; for a *redis.ClusterClient, the master that owns the
// keys' slot in the client's slot map; for a *redis.Ring, the keys' shard; for any other
// client, the backend as a whole. A node that fails sends only the keys it holds to the
// failure policy: the keys of the other nodes keep their exact shared quotas. While a
// node is down, only one call per ProbeInterval for that node, whatever its limiter or
// key, tries it again; the others whose keys it holds take the failure policy at once.
// The limiter whose call finds a node down publishes backend.EventFailed, and the one
// whose call the node answers again publishes backend.EventRecovered: one of each per
// node and outage, with the attribute "node" the node's address. A node down that no
// call reaches any more (its slots moved away, or a replica took its place) is pinged,
// when its probe is due, by a call of another node (with a client that has
// ContextTimeoutEnabled, which bounds the ping), so that its outage ends too. While every
// node answers, calls pay nothing for this (no slot lookup); while one is down, each
// limiter looks its keys' node up at most once per probe interval, from the client's
// slot map in memory. The events of the nodes reach the listeners one at a time, in the
// order of the changes, possibly on the goroutine of another call that is publishing
// them, just after the call that caused one returns.
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
// takes the whole quota. Below 1 fails with R4C-ATR-007. With Heartbeat, N is the count of
// live instances the backend last saw in Redis, and Instances is N only until its first
// heartbeat is answered.
func Instances(n int) Option { return func(c *config) { c.Instances = n } }
