package hedge

import (
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/kind"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// What the tests reach of the package's unexported parts: the observer and the
// configuration a registry sets, the defaults and the check New makes, and the clock.

// Observe sets the observer, as a registry does.
func Observe(o observe.Observer) Option { return kind.Observe[settings](o) }

// WithConfig sets the whole configuration, as a registry's resolved settings do.
func WithConfig(c Config) Option { return func(s *settings) { s.Config = c } }

// DefaultConfig returns the built-in defaults.
func DefaultConfig() Config { return defaultConfig() }

// Validate is the check New makes.
func (c Config) Validate() error { return c.validate() }

// Clock returns h's time source.
func (h *Hedge) Clock() clock.Clock { return h.clk }
