package retry

import (
	"math"
	"math/rand/v2"
	"reflect"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
)

// Layer is the retry's layer, second in the default order, after the fallback; a
// composition has a retry or a hedge, not both, and the segment of its configuration
// keys ("retry" in defaults.retry.…).
const Layer policy.Layer = "retry"

// Config is a retry's resolved configuration, as Retry.Config reports it: the options
// and configuration keys set it. Identical option sets give configurations equal under
// reflect.DeepEqual (error lists hold the same sentinel values).
//
// The wait after failed attempt k, before attempt k+1, is Delay·Multiplier^(k-1), capped
// by MaxDelay, and then, with Jitter j > 0, drawn uniformly from wait·(1±j). With the
// defaults (3 attempts, Delay 500ms, Multiplier 1, no cap, no jitter) a call that keeps
// failing is attempted at 0, 500ms and 1s. An error that implements policy.RetryAfter
// (an HTTP 429 or 503 with a Retry-After header, from package resiliencehttp) sets the
// wait itself, with no cap and no jitter. Waits are slept on the policy's clock: a test
// with clock.NewManual controls them exactly.
//
// Waiting for a rate limiter's permit: a retry composed with a rate limiter inside it
// (the default order of package resilience) retries the limiter's rejections as any
// other error, after its own delay: with a limiter of 1 permit per second and a delay of
// 100ms, the attempts after a rejection find no permit either, and the call may give up
// while the permit is still most of a second away. With WaitForPermit, the wait after a
// rejection by the retry's own limiter (a rate limiter's rejection,
// *ratelimit.ExceededError) is at least the time until that limiter's next permit, read
// from the error as the wait starts: the next attempt finds its permit. In a composition
// of package resilience, the retry's own limiter is the composition's rate limiter; a
// retry used on its own waits for any limiter that refused an attempt.
type Config struct {
	// MaxAttempts is the total number of attempts, the first included; 1 means no retry.
	// At least 1. Default 3.
	MaxAttempts int
	// Delay is the wait before the second attempt. At least 0. Default 500ms.
	Delay time.Duration
	// Multiplier is the backoff factor: the wait before attempt k+1 is
	// Delay·Multiplier^(k-1). At least 1 and finite. Default 1, a constant delay.
	Multiplier float64
	// MaxDelay caps the computed wait, before jitter; a cap below Delay caps the first
	// wait too. At least 0. Default 0, no cap.
	MaxDelay time.Duration
	// Jitter randomises each wait: it is drawn uniformly from wait·(1±Jitter), after the
	// cap. Between 0 and 1. Default 0, no jitter.
	Jitter float64
	// WaitForPermit true makes the wait after an attempt that a rate limiter refused (a
	// rate limiter's rejection, *ratelimit.ExceededError, found with errors.As) at least
	// the time until that limiter's next permit, read from the error when the wait
	// starts: the next attempt never arrives before the permit it needs. Only the
	// rejections of the retry's own rate limiter count, in a composition of package
	// resilience (the composition's rate limiter); a retry used on its own counts every
	// one. A rejection that cannot tell the time (a per-key limiter's), or that comes from
	// another limiter, leaves the wait as it is.
	// Default false: a rejection is waited on like any other error. The configuration key
	// is retry.waitForPermit.
	WaitForPermit bool
	// RetryOn lists the errors that are retried, matched with errors.Is (the option On).
	// Default empty: every error. Set in code only: no configuration key sets it.
	RetryOn []error
	// AbortOn lists errors that are never retried, matched with errors.Is; it wins over
	// RetryOn and the predicate of If. Default empty. Set in code only.
	AbortOn []error
	// Disabled true makes every call a single attempt. Default false: the zero value is
	// enabled. The configuration key is retry.enabled.
	Disabled bool
}

// defaultConfig returns the built-in defaults: 3 attempts, 500ms between them, constant
// delay (multiplier 1), no cap, no jitter, no wait for a rate limiter's permit, every
// error retried, enabled.
func defaultConfig() Config {
	return Config{MaxAttempts: 3, Delay: 500 * time.Millisecond, Multiplier: 1}
}

// validate checks the configuration and returns a *policy.ConfigError: R4C-ATR-007 if
// MaxAttempts < 1, Multiplier < 1 (or not finite) or Jitter is outside [0, 1];
// R4C-ATR-004 if Delay or MaxDelay is negative.
func (c Config) validate() error {
	return r4c.First(
		r4c.AtLeast("retry.maxAttempts", c.MaxAttempts, 1, "it counts the first attempt"),
		r4c.NotNegative("retry.delay", c.Delay, ""),
		r4c.FiniteAtLeast("retry.multiplier", c.Multiplier, 1, "1 keeps the delay constant"),
		r4c.NotNegative("retry.maxDelay", c.MaxDelay, "0 means no cap"),
		r4c.Between("retry.jitter", c.Jitter, 0, 1),
	)
}

// backoff returns the wait after failed attempt n (from 1) before attempt n+1, before
// jitter: Delay·Multiplier^(n-1), capped by MaxDelay when it is set, and at the largest
// time.Duration. It is never negative: a Delay of 0 gives 0 whatever the multiplier and
// n, and a configuration that validate refuses (a negative Delay, a Multiplier below 1 or
// not finite) gives a wait between 0 and the cap, never an overflow. n < 1 counts as 1.
func (c Config) backoff(n int) time.Duration {
	d := max(c.Delay, 0)
	if c.Multiplier != 1 && n > 1 {
		// Delay·Multiplier^(n-1) saturates: Multiplier^(n-1) may be +Inf, and 0·Inf, a NaN,
		// counts as 0.
		d = sat.Scale(d, math.Pow(c.Multiplier, float64(n-1)))
	}
	if c.MaxDelay > 0 && d > c.MaxDelay {
		return c.MaxDelay
	}
	return d
}

// settings is what options produce: the configuration and how the instance is named,
// timed and observed.
type settings struct {
	Config
	contract.Common
	retryIf *contract.Predicate // If's predicate; nil: none. Not in Config, so that setting
	// the whole Config keeps it.
	rand rand.Source // the jitter's random source; nil: math/rand/v2's global source
}

func defaults() settings { return settings{Config: defaultConfig()} }

// attrs are the configuration attributes, which also name what a reload changes.
var attrs = []contract.Attr[settings]{
	contract.IntAttr("maxAttempts", func(s *settings) *int { return &s.MaxAttempts }),
	contract.DurationAttr("delay", func(s *settings) *time.Duration { return &s.Delay }),
	contract.FloatAttr("multiplier", func(s *settings) *float64 { return &s.Multiplier }),
	contract.DurationAttr("maxDelay", func(s *settings) *time.Duration { return &s.MaxDelay }),
	contract.FloatAttr("jitter", func(s *settings) *float64 { return &s.Jitter }),
	contract.BoolAttr("waitForPermit", func(s *settings) *bool { return &s.WaitForPermit }),
	contract.EnabledAttr(func(s *settings) *bool { return &s.Disabled }),
}

// descriptor is how a registry sees retries.
var descriptor = contract.Conventional(&contract.Descriptor[settings]{
	L:        Layer,
	Attrs:    attrs,
	Defaults: defaults,
	Config:   func(s *settings) any { return contract.Shared[Config]{Config: s.Config, If: s.retryIf} },
	Result:   func(s *settings) reflect.Type { return s.retryIf.ResultType() },
	Metrics:  metrics,

	Compose: contract.Composition{Rank: 20, Role: contract.Role{Name: contract.RoleAttempts}, Live: contract.Live((*Retry).checkReconfigure, (*Retry).reconfigure), BindPermits: bindPermits,
		BindAttempts: bindAttempts},
	CodeAttrs: []contract.Param{
		{Name: "retryOn", Option: "On", Value: contract.ErrorsValue},
		{Name: "abortOn", Option: "AbortOn", Value: contract.ErrorsValue},
	},
}, build, (*settings).validate,
	(*Retry).instanceID,
	func(r *Retry) contract.Shared[Config] {
		return contract.Shared[Config]{Config: r.Config(), If: r.cls.If}
	})

// bindAttempts binds a retry to the gate of its composition's layer that limits
// attempts: see limitedBy.
func bindAttempts(p contract.Instance, gate contract.AttemptGate) (contract.Instance, bool) {
	r, ok := p.(*Retry)
	if !ok {
		return p, false
	}
	return r.limitedBy(gate), true
}

// bindPermits binds a retry to the permits of its composition's rate limiter: see
// permitsFrom.
func bindPermits(p contract.Instance, src contract.PermitSource) (contract.Instance, bool) {
	r, ok := p.(*Retry)
	if !ok {
		return p, false
	}
	return r.permitsFrom(src), true
}

func init() { contract.Register(descriptor) }

// Option configures a retry.
type Option func(*settings)

// Enabled false makes every call a single attempt, with no retry and no event. Default
// true.
func Enabled(on bool) Option { return func(s *settings) { s.Disabled = !on } }

// MaxAttempts sets the total number of attempts, the first included. Default 3. Less
// than 1 fails with R4C-ATR-007.
func MaxAttempts(n int) Option { return func(s *settings) { s.MaxAttempts = n } }

// Delay sets the wait before the second attempt. Default 500ms. Negative fails with
// R4C-ATR-004.
func Delay(d time.Duration) Option { return func(s *settings) { s.Delay = d } }

// Multiplier sets the backoff factor: the wait before attempt k+1 is
// delay·multiplier^(k-1). Default 1, a constant delay. Less than 1, or not finite, fails
// with R4C-ATR-007.
func Multiplier(f float64) Option { return func(s *settings) { s.Multiplier = f } }

// MaxDelay caps each computed wait, before jitter. Default 0, no cap. Negative fails with
// R4C-ATR-004.
func MaxDelay(d time.Duration) Option { return func(s *settings) { s.MaxDelay = d } }

// Jitter randomises each wait uniformly within wait·(1±f), after the cap. Default 0,
// none. Outside [0, 1] fails with R4C-ATR-007.
func Jitter(f float64) Option { return func(s *settings) { s.Jitter = f } }

// WaitForPermit true makes the wait after an attempt that the retry's rate limiter
// refused last at least until that limiter's next permit, so that the next attempt finds
// it (see Config, and Config.WaitForPermit): with a limiter of 1 permit per second whose
// permit was just taken, a retry with a 100ms delay attempts again after 1s, not after
// 100ms. An error that sets its own wait (policy.RetryAfter) keeps it. Default false.
func WaitForPermit(on bool) Option { return func(s *settings) { s.WaitForPermit = on } }

// On adds errors to retry, matched with errors.Is. Default empty: every error is
// retried. Each call adds to the list. AbortOn wins over it, and an error that must never
// be retried (an open circuit breaker's rejection) is never retried whatever the list
// says.
func On(errs ...error) Option {
	return func(s *settings) { s.RetryOn = contract.Append(s.RetryOn, errs) }
}

// AbortOn adds errors that are never retried, matched with errors.Is. Default empty. It
// wins over On and If. Each call adds to the list. Adding ratelimit.ErrExceeded
// makes a rate-limited call fail at once instead of being retried.
func AbortOn(errs ...error) Option {
	return func(s *settings) { s.AbortOn = contract.Append(s.AbortOn, errs) }
}

// If retries the outcomes for which pred returns true, in addition to the errors
// the lists retry: e.g. a response with status 503 returned with a nil error. T must be
// the result type of the calls the retry decorates; wrapping a function of another result
// type fails with R4C-REG-010. An outcome that pred retries and that is still failing
// when the attempts run out is returned as it is. Default none. A later call replaces
// the predicate; a nil pred removes it. pred must be quick, safe for concurrent use, and
// must not panic.
func If[T any](pred func(v T, err error) bool) Option {
	p := contract.NewPredicate(pred)
	return func(s *settings) { s.retryIf = p }
}

// Name shares one retry among every function wrapped with this name; the name is the
// instance id, also of a retry built with New. Default none: each wrapped function has
// its own retry, whose id is the function's id (a retry built with New has no id, "").
func Name(name string) Option { return contract.Name[settings](name) }

// UseConfig applies the configuration keys configs.<name>.retry.*, which take precedence
// over the options in code. Default none. A name with no such keys fails with R4C-REG-004
// when the function is wrapped.
func UseConfig(name string) Option { return contract.UseConfig[settings](name) }

// WithClock sets the time source of the delays. Default clock.System(). A registry sets
// its own.
func WithClock(c clock.Clock) Option { return contract.WithClock[settings](c) }

// OnEvent sets the listener of the retry's EventAttempt, EventExhausted and EventAborted
// events (their documentation says when each is published). Default none: nothing
// is published. A registry adds its own listeners.
func OnEvent(l policy.Listener) Option { return contract.OnEvent[settings](l) }
