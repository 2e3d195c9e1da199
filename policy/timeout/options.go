package timeout

import (
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
)

// Segment is the policy segment of configuration keys: "timeout" (SPEC RG-4).
const Segment = "timeout"

// Config is a timeout's resolved configuration, validated once when the timeout is built.
// Two identical option sets give configurations equal under reflect.DeepEqual.
type Config struct {
	// Duration is how long a call may run, measured on the policy's clock from the moment
	// the call enters the timeout layer. > 0. No default: New takes it as its first
	// argument, a registry sets it from the spec or from the key timeout.duration.
	Duration time.Duration
	// Enabled false lets every call run without a deadline. Default true.
	Enabled bool
}

// DefaultConfig returns the built-in defaults: Enabled true and Duration unset (0), so
// that a timeout without a duration fails validation.
func DefaultConfig() Config { return Config{Enabled: true} }

// Validate checks the configuration and returns a *policy.ConfigError: R4C-ATR-004 if
// Duration is negative, R4C-ATR-007 if it is zero.
func (c Config) Validate() error {
	switch {
	case c.Duration < 0:
		return policy.Errorf(policy.CodeNegativeDuration, Segment+".duration", c.Duration.String(),
			"duration must not be negative")
	case c.Duration == 0:
		return policy.Errorf(policy.CodeOutOfRange, Segment+".duration", c.Duration.String(),
			"duration must be positive (pass it to timeout.New or set timeout.duration)")
	}
	return nil
}

// Set sets one configuration attribute from its string form, as read from a configuration
// key timeout.<attr> (SPEC RG-4): duration or enabled. Syntax errors: R4C-ATR-001
// (duration), R4C-ATR-006 (boolean); an unknown attribute: R4C-CFG-001. Ranges are checked
// by Validate.
func (c *Config) Set(attr, value string) error { return attributes.Set(c, attr, value) }

// Attributes returns the configuration attribute names: duration, enabled.
func Attributes() []string { return attributes.Names() }

var attributes = policy.Attributes[Config]{Segment: Segment, List: []policy.Attribute[Config]{
	policy.DurationAttr("duration", func(c *Config) *time.Duration { return &c.Duration }),
	policy.BoolAttr("enabled", func(c *Config) *bool { return &c.Enabled }),
}}

// Settings is what options produce: the configuration and how the instance is named,
// timed and observed.
type Settings struct {
	Config
	policy.Common
}

// DefaultSettings returns settings holding DefaultConfig.
func DefaultSettings() Settings { return Settings{Config: DefaultConfig()} }

// Option configures a timeout.
type Option func(*Settings)

// Apply applies opts in order; nil options are skipped.
func (s *Settings) Apply(opts ...Option) {
	for _, o := range opts {
		if o != nil {
			o(s)
		}
	}
}

// Duration sets how long a call may run (> 0). New sets it from its first argument; this
// option, applied after it, overrides it.
func Duration(d time.Duration) Option { return func(s *Settings) { s.Duration = d } }

// Enabled false lets every call run without a deadline [true].
func Enabled(on bool) Option { return func(s *Settings) { s.Enabled = on } }

// Name shares one timeout instance among every function wrapped with this name; the name
// is the instance id (SPEC RG-1, RG-2).
func Name(name string) Option { return func(s *Settings) { s.Common.Name = name } }

// UseConfig applies the keys configs.<name>.timeout.* (SPEC RG-4).
func UseConfig(name string) Option { return func(s *Settings) { s.ConfigName = name } }

// WithClock sets the time source [clock.System()]. A registry sets its own (SPEC RG-6).
func WithClock(c clock.Clock) Option { return func(s *Settings) { s.Clock = c } }

// WithInstanceID sets the instance id of a timeout built with New [the Name, else
// "timeout"].
func WithInstanceID(id string) Option { return func(s *Settings) { s.InstanceID = id } }

// OnEvent sets the listener of the timeout's TimeoutExceeded events (SPEC RG-5).
func OnEvent(l policy.Listener) Option { return func(s *Settings) { s.Listener = l } }
