package timeout

import (
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// Layer is the timeout's layer, after the rate limiter in the default order, and the
// segment of its configuration keys ("timeout" in defaults.timeout.…). In the default
// order the timeout sits inside the rate limiter and outside the bulkhead, so time spent
// waiting for a permit does not count, and time spent waiting for a bulkhead slot does.
const Layer policy.Layer = "timeout"

// Config is a timeout's resolved configuration, as Timeout.Config reports it: New's
// duration, the options and the configuration keys set it. Two identical option sets give
// configurations equal under reflect.DeepEqual.
//
// A reload of a registry's configuration changes a running timeout: its Duration and
// whether it is enabled both change live, for the calls that start after it; a call
// already running keeps the deadline, and the error, it started with. Each call reads the
// configuration in force once, as it starts, so it never sees half of a change. An
// invalid configuration is refused with the error New would return and changes nothing.
// A change publishes a ConfigChanged event naming the attributes that changed
// ("duration", "enabled"); a configuration equal to the one in force publishes nothing.
type Config struct {
	// Duration is how long a call may run, measured on the policy's clock from the moment
	// the call enters the timeout layer. Positive. Default none: New takes it as its first
	// argument, a registry sets it from the spec or from the key timeout.duration. A
	// reload changes it on a running timeout, for the calls that start after the change.
	Duration time.Duration
	// Disabled true lets every call run without a deadline. Default false: the zero value
	// is enabled. The configuration key is timeout.enabled. A reload changes it on a
	// running timeout, for the calls that start after the change.
	Disabled bool
}

// defaultConfig returns the built-in defaults: enabled, and Duration unset (0), so that a
// timeout without a duration fails validation.
func defaultConfig() Config { return Config{} }

// validate checks the configuration and returns a *policy.ConfigError: R4C-ATR-004 if
// Duration is negative, R4C-ATR-007 if it is zero.
func (c Config) validate() error {
	return r4c.Positive("timeout.duration", c.Duration, "pass it to timeout.New or set timeout.duration")
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
	leading(contract.DurationAttr("duration", func(s *settings) *time.Duration { return &s.Duration })),
	contract.EnabledAttr(func(s *settings) *bool { return &s.Disabled }),
}

// descriptor is how a registry sees timeouts.
var descriptor = contract.Conventional(&contract.Descriptor[settings]{
	L:        Layer,
	Attrs:    attrs,
	Defaults: defaults,
	Config:   func(s *settings) any { return s.Config },
	Metrics:  metrics,

	Compose: contract.Composition{Rank: 60, Live: contract.Live((*Timeout).checkReconfigure, (*Timeout).reconfigure)},
}, build, (*settings).validate,
	func(t *Timeout) string { return t.events.ID },
	(*Timeout).Config)

// leading returns a, the duration, as the first argument of resilience.Timeout in
// generated code, with the value the generator's range check assumes without one (the
// duration has no default).
func leading(a contract.Attr[settings]) contract.Attr[settings] {
	a.Leading, a.Assume = true, "1s"
	return a
}

func init() { contract.Register(descriptor) }

// Option configures a timeout.
type Option func(*settings)

// Enabled false lets every call run without a deadline. Default true.
func Enabled(on bool) Option { return func(s *settings) { s.Disabled = !on } }

// Duration sets how long a call may run, on the timeout's clock. Default none: New sets
// it from its first argument, and this option, applied after it, overrides it. Negative
// fails with R4C-ATR-004, zero with R4C-ATR-007.
func Duration(d time.Duration) Option { return func(s *settings) { s.Duration = d } }

// Name shares one timeout instance among every function wrapped with this name; the name
// is the instance id, also of a timeout built with New. Default none: each wrapped
// function has its own timeout, whose id is the function's id (a timeout built with New
// has no id, "").
func Name(name string) Option { return contract.Name[settings](name) }

// UseConfig applies the configuration keys configs.<name>.timeout.*, which take
// precedence over the options in code. Default none. A name with no such keys fails with
// R4C-REG-004 when the function is wrapped.
func UseConfig(name string) Option { return contract.UseConfig[settings](name) }

// WithClock sets the time source that measures the deadline: with a manual clock the
// context ends when the test advances the clock past it. Default clock.System(). A
// registry sets its own.
func WithClock(c clock.Clock) Option { return contract.WithClock[settings](c) }

// OnEvent sets the listener of the timeout's events: EventExceeded, and
// ConfigChanged when a reload changes its configuration. Default none: nothing is
// published. A registry adds its own listeners.
func OnEvent(l policy.Listener) Option { return contract.OnEvent[settings](l) }
