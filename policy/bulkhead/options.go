package bulkhead

import (
	"strconv"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
)

// Segment is the policy segment of configuration keys: "bulkhead" (SPEC RG-4).
const Segment = "bulkhead"

// Config is a bulkhead's resolved configuration, validated once when the bulkhead is
// built. Two identical option sets give configurations equal under reflect.DeepEqual.
type Config struct {
	// MaxConcurrent is how many calls may be in flight at once. ≥ 1. Default 25.
	MaxConcurrent int
	// MaxWait is how long a call may wait for a slot; 0 (the default) rejects at once
	// when every slot is taken. ≥ 0.
	MaxWait time.Duration
	// Enabled false lets every call through without taking a slot. Default true.
	Enabled bool
}

// DefaultConfig returns the built-in defaults: MaxConcurrent 25, MaxWait 0, Enabled true.
func DefaultConfig() Config { return Config{MaxConcurrent: 25, Enabled: true} }

// Validate checks the configuration and returns a *policy.ConfigError: R4C-ATR-007 if
// MaxConcurrent < 1, R4C-ATR-004 if MaxWait < 0.
func (c Config) Validate() error {
	switch {
	case c.MaxConcurrent < 1:
		return policy.Errorf(policy.CodeOutOfRange, Segment+".maxConcurrent", strconv.Itoa(c.MaxConcurrent),
			"maxConcurrent must be at least 1")
	case c.MaxWait < 0:
		return policy.Errorf(policy.CodeNegativeDuration, Segment+".maxWait", c.MaxWait.String(),
			"maxWait must not be negative")
	}
	return nil
}

// Set sets one configuration attribute from its string form, as read from a configuration
// key bulkhead.<attr> (SPEC RG-4): maxConcurrent, maxWait or enabled. Syntax errors:
// R4C-ATR-001 (duration), R4C-ATR-005 (number), R4C-ATR-006 (boolean); an unknown
// attribute: R4C-CFG-001. Ranges are checked by Validate.
func (c *Config) Set(attr, value string) error { return attributes.Set(c, attr, value) }

// Attributes returns the configuration attribute names: maxConcurrent, maxWait, enabled.
func Attributes() []string { return attributes.Names() }

var attributes = policy.Attributes[Config]{Segment: Segment, List: []policy.Attribute[Config]{
	policy.IntAttr("maxConcurrent", func(c *Config) *int { return &c.MaxConcurrent }),
	policy.DurationAttr("maxWait", func(c *Config) *time.Duration { return &c.MaxWait }),
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

// Option configures a bulkhead.
type Option func(*Settings)

// Apply applies opts in order; nil options are skipped.
func (s *Settings) Apply(opts ...Option) {
	for _, o := range opts {
		if o != nil {
			o(s)
		}
	}
}

// MaxConcurrent sets how many calls may be in flight at once [25]; < 1 is R4C-ATR-007.
func MaxConcurrent(n int) Option { return func(s *Settings) { s.MaxConcurrent = n } }

// MaxWait sets how long a call may wait for a slot [0: reject at once]; < 0 is
// R4C-ATR-004.
func MaxWait(d time.Duration) Option { return func(s *Settings) { s.MaxWait = d } }

// Enabled false lets every call through without taking a slot [true].
func Enabled(on bool) Option { return func(s *Settings) { s.Enabled = on } }

// Name shares one bulkhead among every function wrapped with this name; the name is the
// instance id (SPEC RG-1, RG-2).
func Name(name string) Option { return func(s *Settings) { s.Common.Name = name } }

// UseConfig applies the keys configs.<name>.bulkhead.* (SPEC RG-4).
func UseConfig(name string) Option { return func(s *Settings) { s.ConfigName = name } }

// WithClock sets the time source [clock.System()]: it times MaxWait. A registry sets its
// own (SPEC RG-6).
func WithClock(c clock.Clock) Option { return func(s *Settings) { s.Clock = c } }

// WithInstanceID sets the instance id of a bulkhead built with New [the Name, else
// "bulkhead"].
func WithInstanceID(id string) Option { return func(s *Settings) { s.InstanceID = id } }

// OnEvent sets the listener of the bulkhead's BulkheadRejected and BulkheadWaited events
// (SPEC RG-5).
func OnEvent(l policy.Listener) Option { return func(s *Settings) { s.Listener = l } }
