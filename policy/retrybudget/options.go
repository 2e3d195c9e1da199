package retrybudget

import (
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// Layer is the retry budget's layer, just inside the fallback and outside the retry and
// the hedge in the default order, so that it sees each call once, whatever its attempts;
// and the segment of its configuration keys ("retryBudget" in defaults.retryBudget.…).
const Layer policy.Layer = "retryBudget"

// Config is a retry budget's resolved configuration, as Budget.Config reports it: the
// options and configuration keys set it. Two identical option sets give configurations
// equal under reflect.DeepEqual.
//
// A reload of a registry's configuration changes a running budget: Ratio, MinPerSecond,
// Window and whether it is enabled all change at once, for the attempts asked for after
// the change; the calls and extra attempts counted so far stay counted (a new Window
// keeps them as counted at the time of the change, until it has passed). An invalid
// configuration is refused with the error New would return and changes nothing. A change
// publishes a ConfigChanged event naming the attributes that changed ("enabled",
// "minPerSecond", "ratio", "window"); a configuration equal to the one in force publishes
// nothing.
type Config struct {
	// Ratio bounds the extra attempts (retries and hedges) asked for in the last Window to
	// this fraction of the calls seen in it (see MinPerSecond for the floor). From 0 to 1.
	// Default 0.2. It stands for the decimal written, and the budget compares exactly:
	// 0.2 of 15 calls allows 3 extra attempts, not 2 or 4.
	Ratio float64
	// MinPerSecond is the budget's floor, in extra attempts per second: whatever Ratio
	// allows, MinPerSecond × Window (in seconds) extra attempts are allowed per window,
	// so that a quiet service still retries. At least 0, finite. Default 10. Exact as
	// Ratio is: 0.5 over a 3s window allows 2 extra attempts (1.5, rounded up).
	MinPerSecond float64
	// Window is the span over which the budget counts calls and extra attempts, on the
	// budget's clock, in 20 buckets of Window/20 each. More than 0. Default 10s.
	Window time.Duration
	// Disabled true lets every extra attempt through and counts nothing. Default false:
	// the zero value is enabled. The configuration key is retryBudget.enabled.
	Disabled bool
}

// defaultConfig returns the built-in defaults: Ratio 0.2, MinPerSecond 10, Window 10s,
// enabled, as Finagle's retry budget.
func defaultConfig() Config {
	return Config{Ratio: 0.2, MinPerSecond: 10, Window: 10 * time.Second}
}

// validate checks the configuration and returns a *policy.ConfigError, R4C-ATR-007, if
// Ratio is outside [0, 1] (or NaN), MinPerSecond is negative or not finite (NaN and ±Inf
// are refused), or Window is not positive (R4C-ATR-004 for a negative one).
func (c Config) validate() error {
	return r4c.First(
		r4c.Between("retryBudget.ratio", c.Ratio, 0, 1),
		r4c.FiniteAtLeast("retryBudget.minPerSecond", c.MinPerSecond, 0, ""),
		r4c.Positive("retryBudget.window", c.Window, ""),
	)
}

// settings is what options produce: the configuration and how the instance is named,
// timed and observed.
type settings struct {
	Config
	contract.Common
}

func defaults() settings { return settings{Config: defaultConfig()} }

// attrs are the configuration attributes, which also name what a reload changes.
var attrs = []contract.Attr[settings]{
	contract.FloatAttr("ratio", func(s *settings) *float64 { return &s.Ratio }),
	contract.FloatAttr("minPerSecond", func(s *settings) *float64 { return &s.MinPerSecond }),
	contract.DurationAttr("window", func(s *settings) *time.Duration { return &s.Window }),
	contract.EnabledAttr(func(s *settings) *bool { return &s.Disabled }),
}

// descriptor is how a registry sees retry budgets.
var descriptor = contract.Conventional(&contract.Descriptor[settings]{
	L:        Layer,
	Attrs:    attrs,
	Defaults: defaults,
	Config:   func(s *settings) any { return s.Config },
	State:    contract.Typed((*Budget).Snapshot),
	Metrics:  metrics,

	Compose: contract.Composition{Rank: 15,
		Live:           contract.Live((*Budget).checkReconfigure, (*Budget).reconfigure),
		LimitsAttempts: limitsAttempts},
}, build, (*settings).validate,
	func(b *Budget) string { return b.events.ID },
	(*Budget).Config)

// limitsAttempts returns the gate of a budget, which its composition's retry or hedge
// asks before each extra attempt.
func limitsAttempts(p contract.Instance) (contract.AttemptGate, bool) {
	b, ok := p.(*Budget)
	if !ok || b == nil {
		return nil, false
	}
	return (*gate)(b), true
}

func init() { contract.Register(descriptor) }

// Option configures a retry budget.
type Option func(*settings)

// Enabled false lets every extra attempt through and counts nothing. Default true.
func Enabled(on bool) Option { return func(s *settings) { s.Disabled = !on } }

// Ratio sets the fraction of the calls seen in the window that the extra attempts asked
// for in it may reach (see Budget). Default 0.2. Outside [0, 1] (or NaN) fails with
// R4C-ATR-007.
func Ratio(r float64) Option { return func(s *settings) { s.Ratio = r } }

// MinPerSecond sets the budget's floor, in extra attempts per second: at least
// MinPerSecond × Window (in seconds) extra attempts are allowed per window, whatever Ratio
// allows (see Budget). Default 10. Negative, NaN or infinite fails with R4C-ATR-007.
func MinPerSecond(f float64) Option { return func(s *settings) { s.MinPerSecond = f } }

// Window sets the span over which the budget counts calls and extra attempts, on the
// budget's clock (see Budget). Default 10s. Zero fails with R4C-ATR-007, negative with
// R4C-ATR-004.
func Window(d time.Duration) Option { return func(s *settings) { s.Window = d } }

// Name shares one budget among every composition wrapped with this name: their calls
// and their retries and hedges count together. The name is the instance id, also of a
// budget built with New. Default none: each wrapped function has its own budget, whose
// id is the function's id (a budget built with New has no id, ""). Functions that share
// a name must resolve the same configuration, or wrapping fails with R4C-REG-008.
func Name(name string) Option { return contract.Name[settings](name) }

// UseConfig applies the configuration keys configs.<name>.retryBudget.*, which take
// precedence over the options in code. Default none. A name with no such keys fails with
// R4C-REG-004 when the function is wrapped.
func UseConfig(name string) Option { return contract.UseConfig[settings](name) }

// WithClock sets the time source of the window. Default clock.System(). A registry sets
// its own.
func WithClock(c clock.Clock) Option { return contract.WithClock[settings](c) }

// OnEvent sets the listener of the budget's events: EventRefused, and ConfigChanged when
// a reload changes its configuration. Default none: nothing is published. A registry
// adds its own listeners.
func OnEvent(l policy.Listener) Option { return contract.OnEvent[settings](l) }
