package hedge

import (
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// What the tests reach of the package's unexported parts: the resolved configuration, the
// observer and the configuration a registry sets, the defaults and the check New makes,
// and the clock.

// Config is a hedge's resolved configuration.
type Config = config

// Config returns h's configuration, with copies of its error lists.
func (h *Hedge) Config() Config {
	c := h.cfg
	contract.Own(&c.HedgeOn, &c.AbortOn)
	return c
}

// Observe sets the observer, as a registry does.
func Observe(o observe.Observer) Option { return contract.Observe[settings](o) }

// WithConfig sets the whole configuration, as a registry's resolved settings do.
func WithConfig(c Config) Option { return func(s *settings) { s.config = c } }

// DefaultConfig returns the built-in defaults.
func DefaultConfig() Config { return defaultConfig() }

// Validate is the check New makes.
func (c Config) Validate() error { return c.validate() }

// Clock returns h's time source.
func (h *Hedge) Clock() clock.Clock { return h.clk }
