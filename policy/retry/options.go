package retry

import (
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
)

// Config is a retry's resolved configuration, validated once when the retry is built.
// Identical option sets give configurations equal under reflect.DeepEqual (error lists
// hold the same sentinel values, the random source the same value).
type Config struct {
	// MaxAttempts is the total number of attempts, the first included [3]. ≥ 1; 1 means
	// no retry.
	MaxAttempts int
	// Delay is the wait before the second attempt [500ms]. ≥ 0.
	Delay time.Duration
	// Multiplier is the backoff factor: the wait before attempt k+1 is
	// Delay·Multiplier^(k-1) [1: a constant delay]. ≥ 1 and finite.
	Multiplier float64
	// MaxDelay caps the computed wait, before jitter [0: no cap]. ≥ 0. A cap below Delay
	// caps the first wait too.
	MaxDelay time.Duration
	// Jitter randomises each wait: it is drawn uniformly from wait·(1±Jitter), after the
	// cap [0: no jitter]. In [0, 1].
	Jitter float64
	// RetryOn lists the errors that are retried, matched with errors.Is [empty: every
	// error]. Options in code only: no configuration key sets it.
	RetryOn []error
	// AbortOn lists errors that are never retried, matched with errors.Is; it wins over
	// RetryOn [empty]. Options in code only.
	AbortOn []error
	// Rand is the random source of the jitter [nil: math/rand/v2's global source]. Calls
	// into it are serialised by a lock, so one source may be shared by several retries.
	// Options in code only; meant for tests that need a reproducible jitter.
	Rand rand.Source
	// Enabled false makes every call a single attempt [true].
	Enabled bool
}

// DefaultConfig returns the built-in defaults: 3 attempts, 500ms between them, constant
// delay (multiplier 1), no cap, no jitter, every error retried, enabled.
func DefaultConfig() Config {
	return Config{MaxAttempts: 3, Delay: 500 * time.Millisecond, Multiplier: 1, Enabled: true}
}

// Validate checks the configuration and returns a *policy.ConfigError: R4C-ATR-007 if
// MaxAttempts < 1, Multiplier < 1 (or not finite) or Jitter is outside [0, 1];
// R4C-ATR-004 if Delay or MaxDelay is negative.
func (c Config) Validate() error {
	switch {
	case c.MaxAttempts < 1:
		return policy.Errorf(policy.CodeOutOfRange, Segment+".maxAttempts", strconv.Itoa(c.MaxAttempts),
			"maxAttempts must be at least 1 (it counts the first attempt)")
	case c.Delay < 0:
		return policy.Errorf(policy.CodeNegativeDuration, Segment+".delay", c.Delay.String(),
			"delay must not be negative")
	case !(c.Multiplier >= 1) || math.IsInf(c.Multiplier, 1):
		return policy.Errorf(policy.CodeOutOfRange, Segment+".multiplier", formatFloat(c.Multiplier),
			"multiplier must be a finite number of at least 1 (1 keeps the delay constant)")
	case c.MaxDelay < 0:
		return policy.Errorf(policy.CodeNegativeDuration, Segment+".maxDelay", c.MaxDelay.String(),
			"maxDelay must not be negative (0 means no cap)")
	case !(c.Jitter >= 0 && c.Jitter <= 1):
		return policy.Errorf(policy.CodeOutOfRange, Segment+".jitter", formatFloat(c.Jitter),
			"jitter must be between 0 and 1")
	}
	return nil
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// Backoff returns the wait after failed attempt n (from 1) before attempt n+1, before
// jitter: Delay·Multiplier^(n-1), capped by MaxDelay when it is set, and at the largest
// time.Duration.
func (c Config) Backoff(n int) time.Duration {
	d := float64(c.Delay)
	if c.Multiplier != 1 && n > 1 {
		d *= math.Pow(c.Multiplier, float64(n-1))
	}
	if c.MaxDelay > 0 && d > float64(c.MaxDelay) {
		return c.MaxDelay
	}
	return toDuration(d)
}

// toDuration converts ns to a Duration, saturating instead of overflowing.
func toDuration(ns float64) time.Duration {
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	if ns <= 0 {
		return 0
	}
	return time.Duration(ns)
}

// Set sets one configuration attribute from its string form, as read from a configuration
// key retry.<attr> (SPEC RG-4): maxAttempts, delay, multiplier, maxDelay, jitter or
// enabled. Syntax errors: R4C-ATR-001 (duration), R4C-ATR-005 (number), R4C-ATR-006
// (boolean); an unknown attribute: R4C-CFG-001. Ranges are checked by Validate.
func (c *Config) Set(attr, value string) error { return attributes.Set(c, attr, value) }

// Attributes returns the configuration attribute names: maxAttempts, delay, multiplier,
// maxDelay, jitter, enabled.
func Attributes() []string { return attributes.Names() }

// Segment is the policy segment of configuration keys: "retry".
const Segment = "retry"

var attributes = policy.Attributes[Config]{Segment: Segment, List: []policy.Attribute[Config]{
	policy.IntAttr("maxAttempts", func(c *Config) *int { return &c.MaxAttempts }),
	policy.DurationAttr("delay", func(c *Config) *time.Duration { return &c.Delay }),
	policy.FloatAttr("multiplier", func(c *Config) *float64 { return &c.Multiplier }),
	policy.DurationAttr("maxDelay", func(c *Config) *time.Duration { return &c.MaxDelay }),
	policy.FloatAttr("jitter", func(c *Config) *float64 { return &c.Jitter }),
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

// Option configures a retry.
type Option func(*Settings)

// Apply applies opts in order; nil options are skipped.
func (s *Settings) Apply(opts ...Option) {
	for _, o := range opts {
		if o != nil {
			o(s)
		}
	}
}

// MaxAttempts sets the total number of attempts, the first included [3]. < 1 fails
// validation with R4C-ATR-007.
func MaxAttempts(n int) Option { return func(s *Settings) { s.MaxAttempts = n } }

// Delay sets the wait before the second attempt [500ms]. < 0 fails validation with
// R4C-ATR-004.
func Delay(d time.Duration) Option { return func(s *Settings) { s.Delay = d } }

// Multiplier sets the backoff factor: the wait before attempt k+1 is
// delay·multiplier^(k-1) [1: constant]. < 1 fails validation with R4C-ATR-007.
func Multiplier(f float64) Option { return func(s *Settings) { s.Multiplier = f } }

// MaxDelay caps each computed wait, before jitter [0: no cap]. < 0 fails validation with
// R4C-ATR-004.
func MaxDelay(d time.Duration) Option { return func(s *Settings) { s.MaxDelay = d } }

// Jitter randomises each wait uniformly within wait·(1±f) [0: none]. Outside [0, 1] fails
// validation with R4C-ATR-007.
func Jitter(f float64) Option { return func(s *Settings) { s.Jitter = f } }

// RetryOn retries only the errors matching one of errs with errors.Is [every error]. Each
// call replaces the list. AbortOn wins over it, and an error that must never be retried
// (policy.NeverRetried, SPEC CO-4) is never retried whatever the list says.
func RetryOn(errs ...error) Option {
	return func(s *Settings) { s.RetryOn = nonNil(errs) }
}

// AbortOn never retries the errors matching one of errs with errors.Is [none]; it wins
// over RetryOn. Each call replaces the list. Adding ratelimit.ErrExceeded here makes a
// rate-limited call fail fast instead of being retried (SPEC CO-3).
func AbortOn(errs ...error) Option {
	return func(s *Settings) { s.AbortOn = nonNil(errs) }
}

// RandSource sets the random source of the jitter [math/rand/v2's global source], for
// reproducible tests. Calls into src are serialised by a lock: src may be shared.
func RandSource(src rand.Source) Option { return func(s *Settings) { s.Rand = src } }

// Enabled false makes every call a single attempt, with no retry and no event [true].
func Enabled(on bool) Option { return func(s *Settings) { s.Enabled = on } }

// Name shares one retry among every function wrapped with this name; the name is the
// instance id (SPEC RG-1, RG-2).
func Name(name string) Option { return func(s *Settings) { s.Common.Name = name } }

// UseConfig applies the keys configs.<name>.retry.* (SPEC RG-4).
func UseConfig(name string) Option { return func(s *Settings) { s.ConfigName = name } }

// WithClock sets the time source of the delays [clock.System()]. A registry sets its own
// (SPEC RG-6).
func WithClock(c clock.Clock) Option { return func(s *Settings) { s.Clock = c } }

// WithInstanceID sets the instance id of a retry built with New [the Name, else "retry"].
func WithInstanceID(id string) Option { return func(s *Settings) { s.InstanceID = id } }

// OnEvent sets the listener of the retry's RetryAttempt and RetryExhausted events
// (SPEC RG-5).
func OnEvent(l policy.Listener) Option { return func(s *Settings) { s.Listener = l } }

// nonNil copies errs without its nil entries (errors.Is(err, nil) never matches a
// failure); it returns nil for an empty list, so that RetryOn() restores the default.
func nonNil(errs []error) []error {
	var out []error
	for _, e := range errs {
		if e != nil {
			out = append(out, e)
		}
	}
	return out
}
