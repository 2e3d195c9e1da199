package retrybudget

import (
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// What the tests reach of the package's unexported parts: the gate a composition's retry
// or hedge asks, the live change a registry's reload makes, and the observer a registry
// sets.

// Gate returns b's gate, as a composition's retry or hedge asks it.
func (b *Budget) Gate() contract.AttemptGate { g, _ := limitsAttempts(b); return g }

// Reconfigure is the change a registry's reload makes to b.
func (b *Budget) Reconfigure(c Config) error { return b.reconfigure(c) }

// CheckReconfigure is the check a registry's reload makes before it changes b.
func (b *Budget) CheckReconfigure(c Config) error { return b.checkReconfigure(c) }

// Observe sets the observer, as a registry does.
func Observe(o observe.Observer) Option { return contract.Observe[settings](o) }

// DefaultConfig returns the built-in defaults.
func DefaultConfig() Config { return defaultConfig() }
