package fallback

import (
	"reflect"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// What the tests reach of the package's unexported parts: the resolved configuration and
// id, the observer and the configuration a registry sets, and the classification of
// errors.

// Config is a fallback's resolved configuration.
type Config = config

// DefaultConfig returns the built-in defaults.
func DefaultConfig() Config { return defaults().config }

// Config returns f's configuration, with copies of its error lists.
func (f *Fallback[T]) Config() Config {
	c := f.cfg
	contract.Own(&c.HandleOn, &c.IgnoreOn)
	return c
}

// InstanceID returns f's id, which names it in its events.
func (f *Fallback[T]) InstanceID() string { return f.events.ID }

// Handles reports whether err reaches f, HandleIf's predicate aside.
func (f *Fallback[T]) Handles(err error) bool { return f.cls.Error(err) }

// ResultType returns T.
func (f *Fallback[T]) ResultType() reflect.Type { return reflect.TypeFor[T]() }

// Observe sets the observer, as a registry does.
func Observe(o observe.Observer) Option { return contract.Observe[settings](o) }

// WithConfig sets the whole configuration, as a registry's resolved settings do.
func WithConfig(c Config) Option { return func(s *settings) { s.config = c } }

// DecorateFunc is Decorate for a decorate.Func.
func DecorateFunc[A, T any](f *Fallback[T], next decorate.Func[A, T]) decorate.Func[A, T] {
	return Decorate[decorate.Func[A, T], A, T](f, next)
}

// DecorateAsyncFunc is Decorate for a decorate.AsyncFunc.
func DecorateAsyncFunc[A, T any](f *Fallback[T], next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	return Decorate[decorate.AsyncFunc[A, T], A, T](f, next)
}
