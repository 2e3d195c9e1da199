package adaptivelimit

import (
	"context"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/internal/slots"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// The package's unexported helpers, exported to its tests.

// DecorateFunc is decorateFunc.
func DecorateFunc[A, T any](l *Limiter, next decorate.Func[A, T]) decorate.Func[A, T] {
	return slots.Func(&l.s, next)
}

// DecorateAsyncFunc is decorateAsyncFunc.
func DecorateAsyncFunc[A, T any](l *Limiter, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	return slots.AsyncFunc(&l.s, next)
}

// Observe sets the observer of a limiter built with New, as a registry's does.
func Observe(o observe.Observer) Option { return contract.Observe[settings](o) }

// TryAcquire lets a call in if it fits under the limit now and nobody waits, whatever
// MaxWait is, as an asynchronous call that does not wait is let in: tryAcquire, and its
// admission or rejection recorded and published with context.Background().
func (l *Limiter) TryAcquire() (Permit, bool) {
	if !l.s.Enabled() {
		return Permit{}, true
	}
	if p, ok := l.s.TryAcquire(policy.PriorityCritical); ok {
		l.s.Events().Admit(context.Background())
		return Permit{l: l, p: p}, true
	}
	l.s.Events().Full(context.Background(), policy.PriorityCritical, 0)
	return Permit{}, false
}

// Limit is Snapshot().Limit.
func (l *Limiter) Limit() int { return l.s.Limit() }

// InFlight is Snapshot().InFlight.
func (l *Limiter) InFlight() int { return l.s.InFlight() }

// Queued is Snapshot().Queued.
func (l *Limiter) Queued() int { return l.s.Queued() }

// InFlight returns the calls in flight once the permit's call was let in, itself
// included.
func (p Permit) InFlight() int { return int(p.p.InFlight) }

// Clock returns the limiter's time source.
func (l *Limiter) Clock() clock.Clock { return l.events.Clock }

// Rejection is the limiter's rejection of a call that did not fit.
func (l *Limiter) Rejection() error { return l.s.Rejection() }

// ExceededError is a limiter's rejection.
type ExceededError = slots.Rejection

// MaxLimitCeiling is maxLimitCeiling.
const MaxLimitCeiling = maxLimitCeiling

// SetShadow is what a registry's reload applies to l (the descriptor's Live).
func SetShadow(l *Limiter, c Config) error {
	change, ok := live(l, c)
	if !ok {
		return r4c.Errorf(r4c.NotLive, "adaptiveLimit", "", "not live")
	}
	if err := change.Check(); err != nil {
		return err
	}
	return change.Apply()
}
