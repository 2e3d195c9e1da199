package ratelimit

import (
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/permitgate"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// DecorateFunc returns next guarded by l, as a registry's composition guards it.
func DecorateFunc[A, T any](l *Limiter, next decorate.Func[A, T]) decorate.Func[A, T] {
	return permitgate.DecorateFunc(any(l), next)
}

// DecorateAsyncFunc returns next guarded by l, as a registry's composition guards it.
func DecorateAsyncFunc[A, T any](l *Limiter, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	return permitgate.DecorateAsyncFunc(any(l), next)
}

// Observe sets the observer of a limiter built with New, as a registry's does.
func Observe(o observe.Observer) Option { return contract.Observe[settings](o) }

// Rejection returns the limiter's one rejection error (errZero for a zero Limiter).
func (l *Limiter) Rejection() error { return l.rejection() }
