package adaptivelimit

import (
	"context"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// The package's unexported helpers, exported to its tests.

// DecorateFunc is decorateFunc.
func DecorateFunc[A, T any](l *Limiter, next decorate.Func[A, T]) decorate.Func[A, T] {
	return decorateFunc(l, next)
}

// DecorateAsyncFunc is decorateAsyncFunc.
func DecorateAsyncFunc[A, T any](l *Limiter, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	return decorateAsyncFunc(l, next)
}

// Observe sets the observer of a limiter built with New, as a registry's does.
func Observe(o observe.Observer) Option { return contract.Observe[settings](o) }

// TryAcquire lets a call in if it fits under the limit now and nobody waits, whatever
// MaxWait is, as an asynchronous call that does not wait is let in: tryAcquire, and its
// admission or rejection recorded and published with context.Background().
func (l *Limiter) TryAcquire() (Permit, bool) {
	if !l.enabled {
		return Permit{}, true
	}
	if p, ok := l.tryAcquire(); ok {
		l.sw.Admit(context.Background())
		return p, true
	}
	l.sw.Reject(context.Background(), 0, l.rej.Plain)
	return Permit{}, false
}

// Limit is Snapshot().Limit.
func (l *Limiter) Limit() int { return int(l.limit.Load()) }

// InFlight is Snapshot().InFlight.
func (l *Limiter) InFlight() int { return int(uint32(l.word.Load())) }

// Queued is Snapshot().Queued.
func (l *Limiter) Queued() int { return int(l.queued.Load()) }

// InFlight returns the calls in flight once the permit's call was let in, itself
// included.
func (p Permit) InFlight() int { return int(p.inFlight) }

// Clock returns the limiter's time source.
func (l *Limiter) Clock() clock.Clock { return l.clk }

// Rejection is the limiter's rejection of a call that did not fit.
func (l *Limiter) Rejection() error { return l.rej.Plain }

// ExceededError is a limiter's rejection.
type ExceededError = exceededError

// MaxLimitCeiling is maxLimitCeiling.
const MaxLimitCeiling = maxLimitCeiling
