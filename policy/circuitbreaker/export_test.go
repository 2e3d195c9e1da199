package circuitbreaker

import (
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// The package's unexported helpers, exported to its tests.

// DecorateFunc is decorateFunc.
func DecorateFunc[A, T any](b *Breaker, next decorate.Func[A, T]) decorate.Func[A, T] {
	return decorateFunc(b, next)
}

// DecorateAsyncFunc is decorateAsyncFunc.
func DecorateAsyncFunc[A, T any](b *Breaker, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	return decorateAsyncFunc(b, next)
}

// Observe sets the observer of a breaker built with New, as a registry's does.
func Observe(o observe.Observer) Option { return contract.Observe[settings](o) }

// State returns the name of the current state, read without a lock.
func (b *Breaker) State() string { return b.state().String() }

// Reconfigure is reconfigure, which a registry's Reload calls.
func (b *Breaker) Reconfigure(c Config) error { return b.reconfigure(c) }

// CheckReconfigure is checkReconfigure.
func (b *Breaker) CheckReconfigure(c Config) error { return b.checkReconfigure(c) }

// MaxWindowSize is maxWindowSize.
const MaxWindowSize = maxWindowSize

// OpenError is a breaker's rejection.
type OpenError = openError

// State returns the name of the state that refused the call.
func (e *openError) State() string { return e.state.String() }
