package retry

import (
	"math/rand/v2"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// What the tests reach of the package's unexported parts: the live change a registry's
// reload makes, the observer, configuration and binding to a rate limiter that a
// registry sets, the random source of the jitter, and the classification of errors.

// Reconfigure is the change a registry's reload makes to r.
func (r *Retry) Reconfigure(c Config) error { return r.reconfigure(c) }

// CheckReconfigure is the check a registry's reload makes before it changes r.
func (r *Retry) CheckReconfigure(c Config) error { return r.checkReconfigure(c) }

// Clock returns r's time source; nil for a Retry not built by New.
func (r *Retry) Clock() clock.Clock {
	if !r.built() {
		return nil
	}
	return r.clk
}

// Retryable reports whether err may be retried by r, attempts, context and If's
// predicate aside.
func (r *Retry) Retryable(err error) bool {
	return r.built() && r.cls.Error(err) && !neverRetried(err)
}

// PermitSource says whose rate-limiter rejections set the wait: see permitsFrom.
type PermitSource = contract.PermitSource

// PermitsFrom is the binding to a composition's rate limiter that a registry makes.
func (r *Retry) PermitsFrom(src PermitSource) *Retry { return r.permitsFrom(src) }

// InstanceID returns r's id as a registry reads it, through the descriptor.
func (r *Retry) InstanceID() string {
	id, _ := descriptor.IDOf(r)
	return id
}

// Observe sets the observer, as a registry does.
func Observe(o observe.Observer) Option { return contract.Observe[settings](o) }

// WithConfig sets the whole configuration, as a registry's resolved settings do.
func WithConfig(c Config) Option { return func(s *settings) { s.Config = c } }

// RandSource sets the random source of the jitter, for a reproducible jitter.
func RandSource(src rand.Source) Option { return func(s *settings) { s.rand = src } }

// DefaultConfig returns the built-in defaults.
func DefaultConfig() Config { return defaultConfig() }

// Validate is the check New makes.
func (c Config) Validate() error { return c.validate() }

// Backoff is the wait after failed attempt n, before jitter.
func (c Config) Backoff(n int) time.Duration { return c.backoff(n) }

// DecorateFunc is Decorate for a decorate.Func.
func DecorateFunc[A, T any](r *Retry, next decorate.Func[A, T]) decorate.Func[A, T] {
	return Decorate[decorate.Func[A, T], A, T](r, next)
}

// DecorateAsyncFunc is Decorate for a decorate.AsyncFunc.
func DecorateAsyncFunc[A, T any](r *Retry, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	return Decorate[decorate.AsyncFunc[A, T], A, T](r, next)
}
