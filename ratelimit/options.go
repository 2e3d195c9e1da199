package ratelimit

import (
	"strconv"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
)

// Config is a limiter's resolved configuration, validated once when the limiter is built.
type Config struct {
	// Permits is how many calls pass per Period, and the burst size (SPEC RL-3). ≥ 1,
	// at most 1,000,000,000 per second of Period (RL-14). No default: it must be set.
	Permits int
	// Period is the length of the quota window. > 0 and ≥ Permits × 1ns (RL-14). No
	// default: it must be set.
	Period time.Duration
	// MaxWait is how long a call may wait for its permit; 0 (the default) rejects at once
	// (SPEC RL-6, RL-7, RL-16). ≥ 0.
	MaxWait time.Duration
	// Enabled false lets every call pass and changes no state (SPEC RL-10). Default true.
	Enabled bool
}

// DefaultConfig returns the built-in defaults (SPEC RL-16): MaxWait 0, Enabled true, and
// Permits and Period unset, so that a limiter without them fails validation.
func DefaultConfig() Config { return Config{Enabled: true} }

// EmissionInterval returns T = Period / Permits, rounded up to a whole nanosecond
// (SPEC RL-2). It is 0 for an invalid configuration.
func (c Config) EmissionInterval() time.Duration {
	if c.Permits < 1 || c.Period <= 0 {
		return 0
	}
	p := time.Duration(c.Permits)
	t := c.Period / p
	if c.Period%p != 0 {
		t++
	}
	return t
}

// Validate checks the configuration (SPEC RL-14) and returns a *policy.ConfigError:
// R4C-ATR-003 if Permits < 1, R4C-ATR-002 if Period <= 0, R4C-REG-001 if Period is
// shorter than Permits × 1ns, R4C-ATR-004 if MaxWait < 0.
func (c Config) Validate() error {
	switch {
	case c.Permits == 0:
		return policy.Errorf(policy.CodeBadPermits, "rateLimiter.permits", "",
			"permits is not set: set ratelimit.Permits or rateLimiter.permits (at least 1)")
	case c.Period == 0 && c.Permits > 0:
		return policy.Errorf(policy.CodeZeroPeriod, "rateLimiter.period", "",
			"period is not set: set ratelimit.Period or rateLimiter.period (positive)")
	case c.Permits < 1:
		return policy.Errorf(policy.CodeBadPermits, "rateLimiter.permits", strconv.Itoa(c.Permits),
			"permits must be at least 1 (set ratelimit.Permits or rateLimiter.permits)")
	case c.Period <= 0:
		return policy.Errorf(policy.CodeZeroPeriod, "rateLimiter.period", c.Period.String(),
			"period must be positive (set ratelimit.Period or rateLimiter.period)")
	case c.Period < time.Duration(c.Permits):
		return policy.Errorf(policy.CodePeriodTooShort, "rateLimiter.period", c.Period.String(),
			"period must be at least 1ns per permit: %d permits need a period of at least %v",
			c.Permits, time.Duration(c.Permits))
	case c.MaxWait < 0:
		return policy.Errorf(policy.CodeNegativeDuration, "rateLimiter.maxWait", c.MaxWait.String(),
			"maxWait must not be negative")
	}
	return nil
}

// Set sets one configuration attribute from its string form, as read from a configuration
// key rateLimiter.<attr> (SPEC RG-4): permits, period, maxWait or enabled. Syntax errors:
// R4C-ATR-001 (duration), R4C-ATR-005 (number), R4C-ATR-006 (boolean); an unknown
// attribute: R4C-CFG-001.
func (c *Config) Set(attr, value string) error { return attributes.Set(c, attr, value) }

// Attributes returns the configuration attribute names: permits, period, maxWait, enabled.
func Attributes() []string { return attributes.Names() }

// Segment is the policy segment of configuration keys: "rateLimiter".
const Segment = "rateLimiter"

var attributes = policy.Attributes[Config]{Segment: Segment, List: []policy.Attribute[Config]{
	policy.IntAttr("permits", func(c *Config) *int { return &c.Permits }),
	policy.DurationAttr("period", func(c *Config) *time.Duration { return &c.Period }),
	policy.DurationAttr("maxWait", func(c *Config) *time.Duration { return &c.MaxWait }),
	policy.BoolAttr("enabled", func(c *Config) *bool { return &c.Enabled }),
}}

// Settings is what options produce: the configuration and how the instance is named,
// timed and observed, and where its state lives.
type Settings struct {
	Config
	policy.Common
	// Backend keeps the limiter's state outside the process (WithBackend); nil, the
	// default, keeps it in the Limiter. It is not part of Config: two limiters that share
	// a name compare their Config only (SPEC RG-2).
	Backend Backend
	// MaxKeys bounds how many keys a Keyed limiter holds at once (option MaxKeys; 0, the
	// default, means DefaultMaxKeys). A Limiter ignores it.
	MaxKeys int
}

// DefaultSettings returns settings holding DefaultConfig.
func DefaultSettings() Settings { return Settings{Config: DefaultConfig()} }

// Option configures a limiter.
type Option func(*Settings)

// Apply applies opts in order.
func (s *Settings) Apply(opts ...Option) {
	for _, o := range opts {
		if o != nil {
			o(s)
		}
	}
}

// Permits sets how many calls pass per period, and the burst (SPEC RL-3). Required; ≥ 1.
func Permits(n int) Option { return func(s *Settings) { s.Permits = n } }

// Period sets the quota window. Required; > 0 and ≥ permits × 1ns (SPEC RL-14).
func Period(d time.Duration) Option { return func(s *Settings) { s.Period = d } }

// MaxWait sets how long a call may wait for its permit [0: reject at once] (SPEC RL-7).
func MaxWait(d time.Duration) Option { return func(s *Settings) { s.MaxWait = d } }

// Enabled false lets every call through, changing no state [true] (SPEC RL-10).
func Enabled(on bool) Option { return func(s *Settings) { s.Enabled = on } }

// Name shares one limiter among every function wrapped with this name; the name is the
// instance id (SPEC RG-1, RG-2).
func Name(name string) Option { return func(s *Settings) { s.Common.Name = name } }

// UseConfig applies the keys configs.<name>.rateLimiter.* (SPEC RG-4).
func UseConfig(name string) Option { return func(s *Settings) { s.ConfigName = name } }

// WithClock sets the time source [clock.System()]. A registry sets its own (SPEC RG-6).
func WithClock(c clock.Clock) Option { return func(s *Settings) { s.Clock = c } }

// WithInstanceID sets the instance id of a limiter built with New [the Name, else
// "ratelimiter"].
func WithInstanceID(id string) Option { return func(s *Settings) { s.InstanceID = id } }

// OnEvent sets the listener of the limiter's rejection and wait events (SPEC RG-5).
func OnEvent(l policy.Listener) Option { return func(s *Settings) { s.Listener = l } }
