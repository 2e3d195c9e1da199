package throttle

import (
	"context"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// What the tests reach of the package's unexported parts: the live change a registry's
// reload makes, the observer and the configuration a registry sets, the defaults and the
// check New makes, the descriptor, and the decorators of the layer.

// Reconfigure is the change a registry's reload makes to t.
func (t *Throttle) Reconfigure(c Config) error { return t.reconfigure(c) }

// CheckReconfigure is the check a registry's reload makes before it changes t.
func (t *Throttle) CheckReconfigure(c Config) error { return t.checkReconfigure(c) }

// Observe sets the observer, as a registry does.
func Observe(o observe.Observer) Option { return contract.Observe[settings](o) }

// WithConfig sets the whole configuration, as a registry's resolved settings do.
func WithConfig(c Config) Option { return func(s *settings) { s.Config = c } }

// DefaultConfig returns the built-in defaults.
func DefaultConfig() Config { return defaultConfig() }

// Validate is the check New makes.
func (c Config) Validate() error { return c.validate() }

// Descriptor is the package's descriptor.
var Descriptor = descriptor

// Settings are the settings the options produce, for the descriptor's checks.
type Settings = settings

// DefaultSettings returns the built-in settings.
func DefaultSettings() Settings { return defaults() }

// DecorateFunc is the layer's decorator of synchronous calls.
func DecorateFunc[A, T any](t *Throttle, next func(context.Context, A) (T, error)) func(context.Context, A) (T, error) {
	return Decorate[decorate.Func[A, T], A, T](t, next)
}

// DecorateAsyncFunc is the layer's decorator of calls that return a future.
func DecorateAsyncFunc[A, T any](t *Throttle, next func(context.Context, A) *async.Future[T]) func(context.Context, A) *async.Future[T] {
	return Decorate[decorate.AsyncFunc[A, T], A, T](t, next)
}

// Probability is the rejection probability of a window of r requests and a accepts.
func Probability(c Config, r, a int64) float64 { return probability(&c, r, a) }
