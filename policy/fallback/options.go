package fallback

import (
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
)

// Config is a fallback's resolved configuration. Identical option sets give
// configurations equal under reflect.DeepEqual (the error lists hold the same sentinel
// values). The fallback function itself is not part of it: it is given to New.
type Config struct {
	// HandleOn lists the errors that reach the fallback, matched with errors.Is [empty:
	// every error]. Options in code only: no configuration key sets it.
	HandleOn []error
	// IgnoreOn lists errors that pass through untouched, matched with errors.Is; it wins
	// over HandleOn [empty]. Options in code only.
	IgnoreOn []error
	// Enabled false lets every result through untouched [true].
	Enabled bool
}

// DefaultConfig returns the built-in defaults: every error handled, enabled.
func DefaultConfig() Config { return Config{Enabled: true} }

// Validate checks the configuration. Every Config is valid: it returns nil. (A nil
// fallback function is reported by New, with R4C-REG-010.)
func (c Config) Validate() error { return nil }

// Set sets one configuration attribute from its string form, as read from a configuration
// key fallback.<attr> (SPEC RG-4): only enabled. A value that is not a boolean is
// R4C-ATR-006; an unknown attribute is R4C-CFG-001.
func (c *Config) Set(attr, value string) error { return attributes.Set(c, attr, value) }

// Attributes returns the configuration attribute names: enabled.
func Attributes() []string { return attributes.Names() }

// Segment is the policy segment of configuration keys: "fallback".
const Segment = "fallback"

var attributes = policy.Attributes[Config]{Segment: Segment, List: []policy.Attribute[Config]{
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

// Option configures a fallback. Options do not depend on the fallback's result type.
type Option func(*Settings)

// Apply applies opts in order; nil options are skipped.
func (s *Settings) Apply(opts ...Option) {
	for _, o := range opts {
		if o != nil {
			o(s)
		}
	}
}

// HandleOn sends only the errors matching one of errs (errors.Is) to the fallback [every
// error]. Each call replaces the list; IgnoreOn wins over it.
func HandleOn(errs ...error) Option { return func(s *Settings) { s.HandleOn = nonNil(errs) } }

// IgnoreOn lets the errors matching one of errs (errors.Is) pass through untouched [none];
// it wins over HandleOn. Each call replaces the list. IgnoreOn(context.Canceled) returns
// a caller's cancellation as it is instead of a fallback result.
func IgnoreOn(errs ...error) Option { return func(s *Settings) { s.IgnoreOn = nonNil(errs) } }

// Enabled false lets every result through untouched, the fallback never called [true].
func Enabled(on bool) Option { return func(s *Settings) { s.Enabled = on } }

// Name shares one fallback among every function wrapped with this name; the name is the
// instance id (SPEC RG-1, RG-2).
func Name(name string) Option { return func(s *Settings) { s.Common.Name = name } }

// UseConfig applies the keys configs.<name>.fallback.* (SPEC RG-4).
func UseConfig(name string) Option { return func(s *Settings) { s.ConfigName = name } }

// WithClock sets the time source of event times [clock.System()]. A registry sets its own
// (SPEC RG-6).
func WithClock(c clock.Clock) Option { return func(s *Settings) { s.Clock = c } }

// WithInstanceID sets the instance id of a fallback built with New [the Name, else
// "fallback"].
func WithInstanceID(id string) Option { return func(s *Settings) { s.InstanceID = id } }

// OnEvent sets the listener of the fallback's FallbackApplied events (SPEC RG-5).
func OnEvent(l policy.Listener) Option { return func(s *Settings) { s.Listener = l } }

// nonNil copies errs without its nil entries (errors.Is(err, nil) never matches a
// failure); it returns nil for an empty list, so that HandleOn() restores the default.
func nonNil(errs []error) []error {
	var out []error
	for _, e := range errs {
		if e != nil {
			out = append(out, e)
		}
	}
	return out
}
