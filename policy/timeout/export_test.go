package timeout

import (
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// What the tests reach of the package's unexported parts: the live change a registry's
// reload makes, the observer and the configuration a registry sets, the defaults and the
// check New makes, the clock, and the error of the calls that run past the Duration in
// force.

// Reconfigure is the change a registry's reload makes to t.
func (t *Timeout) Reconfigure(c Config) error { return t.reconfigure(c) }

// CheckReconfigure is the check a registry's reload makes before it changes t.
func (t *Timeout) CheckReconfigure(c Config) error { return t.checkReconfigure(c) }

// Clock returns t's time source.
func (t *Timeout) Clock() clock.Clock { return t.clk }

// Err returns the error of the calls that run past the Duration in force.
func (t *Timeout) Err() error { return t.cur.Load().err }

// InstanceID returns t's id as a registry reads it, through the descriptor.
func (t *Timeout) InstanceID() string {
	id, _ := descriptor.IDOf(t)
	return id
}

// Observe sets the observer, as a registry does.
func Observe(o observe.Observer) Option { return contract.Observe[settings](o) }

// WithConfig sets the whole configuration, as a registry's resolved settings do.
func WithConfig(c Config) Option { return func(s *settings) { s.Config = c } }

// DefaultConfig returns the built-in defaults.
func DefaultConfig() Config { return defaultConfig() }

// Validate is the check New makes.
func (c Config) Validate() error { return c.validate() }

// DecorateFunc is Decorate for a decorate.Func.
func DecorateFunc[A, T any](t *Timeout, next decorate.Func[A, T]) decorate.Func[A, T] {
	return Decorate[decorate.Func[A, T], A, T](t, next)
}

// DecorateAsyncFunc is Decorate for a decorate.AsyncFunc.
func DecorateAsyncFunc[A, T any](t *Timeout, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	return Decorate[decorate.AsyncFunc[A, T], A, T](t, next)
}
