package chaos

import "github.com/resilience4go/resilience4go/internal/decorate"

// What the tests reach of the package's unexported parts: the live change a registry's
// reload makes, the descriptor, and the decorators for calls with an argument.

// Reconfigure is the change a registry's reload makes to c.
func (c *Chaos) Reconfigure(cfg Config) error { return c.reconfigure(cfg) }

// CheckReconfigure is the check a registry's reload makes before it changes c.
func (c *Chaos) CheckReconfigure(cfg Config) error { return c.checkReconfigure(cfg) }

// Descriptor is the package's registered descriptor.
var Descriptor = descriptor

// DecorateFunc is Decorate for a decorate.Func.
func DecorateFunc[A, T any](c *Chaos, next decorate.Func[A, T]) decorate.Func[A, T] {
	return Decorate[decorate.Func[A, T], A, T](c, next)
}

// DecorateAsyncFunc is Decorate for a decorate.AsyncFunc.
func DecorateAsyncFunc[A, T any](c *Chaos, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	return Decorate[decorate.AsyncFunc[A, T], A, T](c, next)
}
