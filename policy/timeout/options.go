package timeout

import (
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/kind"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// Layer is the timeout's layer, after the rate limiter in the default order, and the segment of its configuration keys
// ("timeout" in defaults.timeout.…).
const Layer policy.Layer = "timeout"

// Config is a timeout's resolved configuration, validated when the timeout is built and
// when Reconfigure replaces it. Two identical option sets give configurations equal
// under reflect.DeepEqual.
type Config struct {
	// Duration is how long a call may run, measured on the policy's clock from the moment
	// the call enters the timeout layer. Positive. Default none: New takes it as its first
	// argument, a registry sets it from the spec or from the key timeout.duration. It
	// can change on a running timeout (Reconfigure), for the calls that start after the
	// change.
	Duration time.Duration
	// Disabled true lets every call run without a deadline. Default false: the zero value
	// is enabled. The configuration key is timeout.enabled. It can change on a running
	// timeout (Reconfigure), for the calls that start after the change.
	Disabled bool
}

// DefaultConfig returns the built-in defaults: enabled, and Duration unset (0), so that a
// timeout without a duration fails validation.
func DefaultConfig() Config { return Config{} }

// Validate checks the configuration and returns a *policy.ConfigError: R4C-ATR-004 if
// Duration is negative, R4C-ATR-007 if it is zero.
func (c Config) Validate() error {
	switch {
	case c.Duration < 0:
		return r4c.Errorf(r4c.NegativeDuration, "timeout.duration", c.Duration.String(),
			"duration must not be negative")
	case c.Duration == 0:
		return r4c.Errorf(r4c.OutOfRange, "timeout.duration", c.Duration.String(),
			"duration must be positive (pass it to timeout.New or set timeout.duration)")
	}
	return nil
}

// settings is what options produce: the configuration and how the instance is named,
// timed and observed.
type settings struct {
	Config
	kind.Common
}

func defaults() settings { return settings{Config: DefaultConfig()} }

// descriptor is how a registry sees timeouts.
var descriptor = &kind.Descriptor[settings]{
	L: Layer,
	Attrs: []kind.Attr[settings]{
		leading(kind.DurationAttr("duration", func(s *settings) *time.Duration { return &s.Duration })),
		kind.EnabledAttr(func(s *settings) *bool { return &s.Disabled }),
	},
	Defaults: defaults,
	Common:   func(s *settings) *kind.Common { return &s.Common },
	Config:   func(s *settings) any { return s.Config },
	Build:    func(s settings) (kind.Instance, error) { return build(s) },
	Validate: func(s *settings) error { return s.Config.Validate() },
	Of:       func(p kind.Instance) any { return p.(*Timeout).Config() },
	Metrics:  metrics,

	Compose: kind.Composition{Rank: 60, Live: kind.LiveAs[Config]},
}

// leading returns a, the duration, as the first argument of resilience.Timeout in
// generated code, with the value the generator's range check assumes without one (the
// duration has no default).
func leading(a kind.Attr[settings]) kind.Attr[settings] {
	a.Leading, a.Assume = true, "1s"
	return a
}

func init() { kind.Register(descriptor) }

// Option configures a timeout.
type Option func(*settings)

// WithConfig replaces the whole configuration with c, as resolved elsewhere (e.g. from
// the application's own settings); options after it change c further. Default
// DefaultConfig() with New's duration. c replaces that duration too (resilience.Timeout's
// as well): the zero Config is enabled, and Duration must be set in it, or by Duration
// after it. The timeout validates c when it is built.
func WithConfig(c Config) Option { return func(s *settings) { s.Config = c } }

// Enabled false lets every call run without a deadline. Default true.
func Enabled(on bool) Option { return func(s *settings) { s.Disabled = !on } }

// Duration sets how long a call may run, on the timeout's clock. Default none: New sets
// it from its first argument, and this option, applied after it, overrides it. Negative
// fails with R4C-ATR-004, zero with R4C-ATR-007.
func Duration(d time.Duration) Option { return func(s *settings) { s.Duration = d } }

// Name shares one timeout instance among every function wrapped with this name; the name
// is the instance id. Default none: each wrapped function has its own timeout, whose id
// is the function's id.
func Name(name string) Option { return kind.Name[settings](name) }

// UseConfig applies the configuration keys configs.<name>.timeout.*, which take
// precedence over the options in code. Default none. A name with no such keys fails with
// R4C-REG-004 when the function is wrapped.
func UseConfig(name string) Option { return kind.UseConfig[settings](name) }

// WithClock sets the time source that measures the deadline. Default clock.System(). A
// registry sets its own.
func WithClock(c clock.Clock) Option { return kind.WithClock[settings](c) }

// WithInstanceID sets the instance id of a timeout built with New. Default the Name,
// else "timeout".
func WithInstanceID(id string) Option { return kind.WithInstanceID[settings](id) }

// OnEvent sets the listener of the timeout's events: EventExceeded, and
// ConfigChanged when Reconfigure changes its configuration. Default none: nothing is
// published. A registry adds its own listeners.
func OnEvent(l policy.Listener) Option { return kind.OnEvent[settings](l) }

// Observe sets the observer asked for the instance's observe.Recorder, which is told each
// call's outcome (see observe.Outcome) and each event with the call's context. A
// registry's observer replaces it. Default none.
func Observe(o observe.Observer) Option { return kind.Observe[settings](o) }
