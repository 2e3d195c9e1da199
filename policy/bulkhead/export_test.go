package bulkhead

import (
	"context"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// What the tests reach of the package's unexported parts: the live change a registry's
// reload makes, the observer and the configuration a registry sets, and the slots taken
// directly, as the decorated calls take them.

// Reconfigure is the change a registry's reload makes to b.
func (b *Bulkhead) Reconfigure(c Config) error { return b.reconfigure(c) }

// CheckReconfigure is the check a registry's reload makes before it changes b.
func (b *Bulkhead) CheckReconfigure(c Config) error { return b.checkReconfigure(c) }

// Clock returns b's time source.
func (b *Bulkhead) Clock() clock.Clock { return b.events.Clock }

// Observe sets the observer, as a registry does.
func Observe(o observe.Observer) Option { return contract.Observe[settings](o) }

// WithConfig sets the whole configuration, as a registry's resolved settings do.
func WithConfig(c Config) Option { return func(s *settings) { s.Config = c } }

// DefaultConfig returns the built-in defaults.
func DefaultConfig() Config { return defaultConfig() }

// Validate is the check New makes.
func (c Config) Validate() error { return c.validate() }

// Rejection returns b's plain rejection.
func (b *Bulkhead) Rejection() error { return b.s.Rejection() }

// TryAcquire takes a slot if one is free now and nobody waits, as a decorated call that
// finds one does, and reports whether it did; a refusal is reported as a call's, with
// context.Background(). A disabled bulkhead always returns true.
func (b *Bulkhead) TryAcquire() bool {
	if !b.s.Enabled() {
		return true
	}
	if _, ok := b.s.TryAcquire(policy.PriorityCritical); ok {
		b.s.Events().Admit(context.Background())
		return true
	}
	b.s.Events().Full(context.Background(), policy.PriorityCritical, 0)
	return false
}

// Acquire takes a slot as a decorated synchronous call does, waiting up to MaxWait.
func (b *Bulkhead) Acquire(ctx context.Context) error {
	if !b.s.Enabled() {
		return decorate.ContextErr(ctx)
	}
	_, err := b.s.Acquire(ctx)
	return err
}

// Release gives back a slot taken by TryAcquire or Acquire.
func (b *Bulkhead) Release() {
	if b.s.Enabled() {
		b.s.Release()
	}
}

// DecorateFunc is Decorate for a decorate.Func.
func DecorateFunc[A, T any](b *Bulkhead, next decorate.Func[A, T]) decorate.Func[A, T] {
	return Decorate[decorate.Func[A, T], A, T](b, next)
}

// DecorateAsyncFunc is Decorate for a decorate.AsyncFunc.
func DecorateAsyncFunc[A, T any](b *Bulkhead, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	return Decorate[decorate.AsyncFunc[A, T], A, T](b, next)
}
