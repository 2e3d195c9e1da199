package circuitbreaker

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
)

// WindowType says how the closed-state sliding window counts calls.
type WindowType int

const (
	// CountBased: the window holds the outcomes of the last SlidingWindowSize calls.
	CountBased WindowType = iota
	// TimeBased: the window holds the outcomes of the calls of the last SlidingWindowSize
	// seconds, aggregated in 1-second buckets on the breaker's clock.
	TimeBased
)

// String returns "COUNT_BASED" or "TIME_BASED", the configuration spelling.
func (t WindowType) String() string {
	switch t {
	case CountBased:
		return "COUNT_BASED"
	case TimeBased:
		return "TIME_BASED"
	}
	return "WindowType(" + strconv.Itoa(int(t)) + ")"
}

// MaxWindowSize is the largest SlidingWindowSize (calls for a count-based window, seconds
// for a time-based one): the window's memory is allocated when the breaker is built.
const MaxWindowSize = 1_000_000

// Config is a breaker's resolved configuration, validated once when the breaker is built.
type Config struct {
	// FailureRateThreshold is the failure rate, in percent, at or above which the breaker
	// opens. In (0, 100]. Default 50.
	FailureRateThreshold float64
	// SlidingWindowType says whether SlidingWindowSize counts calls or seconds. Default
	// CountBased.
	SlidingWindowType WindowType
	// SlidingWindowSize is the closed-state window: the last n calls (CountBased) or the
	// calls of the last n seconds (TimeBased). In [1, MaxWindowSize]. Default 100.
	SlidingWindowSize int
	// MinimumCalls is how many outcomes the window must hold before its rates count. ≥ 1.
	// With a count-based window it is capped at SlidingWindowSize. Default 100.
	MinimumCalls int
	// WaitInOpen is how long the breaker stays open before the next call moves it to
	// half-open. ≥ 0. Default 60s.
	WaitInOpen time.Duration
	// PermittedInHalfOpen is the number of trial calls in half-open. ≥ 1. Default 10.
	PermittedInHalfOpen int
	// SlowCallThreshold is the duration above which a call counts as slow. > 0.
	// Default 60s.
	SlowCallThreshold time.Duration
	// SlowCallRateThreshold is the slow-call rate, in percent, at or above which the
	// breaker opens. In (0, 100]. Default 100.
	SlowCallRateThreshold float64
	// IgnoreOn lists errors (matched with errors.Is) that count neither as success nor as
	// failure. Code only; no configuration attribute. Default none.
	IgnoreOn []error
	// RecordOn, when not empty, lists the only errors (matched with errors.Is) that count
	// as failures; other errors count as successes. Empty: every error is a failure.
	// IgnoreOn wins over RecordOn. Code only; no configuration attribute. Default empty.
	RecordOn []error
	// Enabled false makes the breaker start Disabled: every call passes and nothing is
	// recorded. Default true.
	Enabled bool
}

// DefaultConfig returns the built-in defaults: failure rate 50%, a count-based window of
// 100 calls, 100 minimum calls, 60s open, 10 half-open trials, slow calls from 60s, slow
// rate 100%, no error lists, enabled.
func DefaultConfig() Config {
	return Config{
		FailureRateThreshold:  50,
		SlidingWindowType:     CountBased,
		SlidingWindowSize:     100,
		MinimumCalls:          100,
		WaitInOpen:            60 * time.Second,
		PermittedInHalfOpen:   10,
		SlowCallThreshold:     60 * time.Second,
		SlowCallRateThreshold: 100,
		Enabled:               true,
	}
}

// minimumCalls returns the effective minimum: MinimumCalls, capped at the window size for
// count-based windows (a window of n calls never holds more than n outcomes).
func (c Config) minimumCalls() int {
	if c.SlidingWindowType == CountBased {
		return min(c.MinimumCalls, c.SlidingWindowSize)
	}
	return c.MinimumCalls
}

// Validate checks the configuration and returns a *policy.ConfigError:
//   - R4C-ATR-007: a percentage outside (0, 100] (failureRateThreshold,
//     slowCallRateThreshold), a count below 1 (slidingWindowSize, minimumCalls,
//     permittedInHalfOpen), slidingWindowSize above MaxWindowSize, an unknown
//     slidingWindowType, or slowCallThreshold = 0;
//   - R4C-ATR-004: a negative duration (waitInOpen, slowCallThreshold).
func (c Config) Validate() error {
	switch {
	case !inPercentRange(c.FailureRateThreshold):
		return policy.Errorf(policy.CodeOutOfRange, Segment+".failureRateThreshold", formatFloat(c.FailureRateThreshold),
			"failureRateThreshold must be a percentage above 0 and at most 100")
	case c.SlidingWindowType != CountBased && c.SlidingWindowType != TimeBased:
		return policy.Errorf(policy.CodeOutOfRange, Segment+".slidingWindowType", c.SlidingWindowType.String(),
			"slidingWindowType must be COUNT_BASED or TIME_BASED")
	case c.SlidingWindowSize < 1 || c.SlidingWindowSize > MaxWindowSize:
		return policy.Errorf(policy.CodeOutOfRange, Segment+".slidingWindowSize", strconv.Itoa(c.SlidingWindowSize),
			"slidingWindowSize must be at least 1 and at most %d", MaxWindowSize)
	case c.MinimumCalls < 1:
		return policy.Errorf(policy.CodeOutOfRange, Segment+".minimumCalls", strconv.Itoa(c.MinimumCalls),
			"minimumCalls must be at least 1")
	case c.WaitInOpen < 0:
		return policy.Errorf(policy.CodeNegativeDuration, Segment+".waitInOpen", c.WaitInOpen.String(),
			"waitInOpen must not be negative")
	case c.PermittedInHalfOpen < 1:
		return policy.Errorf(policy.CodeOutOfRange, Segment+".permittedInHalfOpen", strconv.Itoa(c.PermittedInHalfOpen),
			"permittedInHalfOpen must be at least 1")
	case c.SlowCallThreshold < 0:
		return policy.Errorf(policy.CodeNegativeDuration, Segment+".slowCallThreshold", c.SlowCallThreshold.String(),
			"slowCallThreshold must not be negative")
	case c.SlowCallThreshold == 0:
		return policy.Errorf(policy.CodeOutOfRange, Segment+".slowCallThreshold", c.SlowCallThreshold.String(),
			"slowCallThreshold must be positive (0 would make every call slow)")
	case !inPercentRange(c.SlowCallRateThreshold):
		return policy.Errorf(policy.CodeOutOfRange, Segment+".slowCallRateThreshold", formatFloat(c.SlowCallRateThreshold),
			"slowCallRateThreshold must be a percentage above 0 and at most 100")
	}
	return nil
}

func inPercentRange(p float64) bool { return p > 0 && p <= 100 } // false for NaN

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// Set sets one configuration attribute from its string form, as read from a configuration
// key circuitBreaker.<attr> (SPEC RG-4); see Attributes for the names. Syntax errors:
// R4C-ATR-001 (duration), R4C-ATR-005 (number), R4C-ATR-006 (boolean), R4C-ATR-007 (a
// slidingWindowType other than COUNT_BASED or TIME_BASED, in any case); an unknown
// attribute: R4C-CFG-001. Ranges are checked by Validate.
func (c *Config) Set(attr, value string) error { return attributes.Set(c, attr, value) }

// Attributes returns the configuration attribute names: failureRateThreshold,
// slidingWindowSize, slidingWindowType, minimumCalls, waitInOpen, permittedInHalfOpen,
// slowCallThreshold, slowCallRateThreshold, enabled.
func Attributes() []string { return attributes.Names() }

// Segment is the policy segment of configuration keys: "circuitBreaker".
const Segment = "circuitBreaker"

var attributes = policy.Attributes[Config]{Segment: Segment, List: []policy.Attribute[Config]{
	policy.FloatAttr("failureRateThreshold", func(c *Config) *float64 { return &c.FailureRateThreshold }),
	policy.IntAttr("slidingWindowSize", func(c *Config) *int { return &c.SlidingWindowSize }),
	{Name: "slidingWindowType", Set: setWindowType},
	policy.IntAttr("minimumCalls", func(c *Config) *int { return &c.MinimumCalls }),
	policy.DurationAttr("waitInOpen", func(c *Config) *time.Duration { return &c.WaitInOpen }),
	policy.IntAttr("permittedInHalfOpen", func(c *Config) *int { return &c.PermittedInHalfOpen }),
	policy.DurationAttr("slowCallThreshold", func(c *Config) *time.Duration { return &c.SlowCallThreshold }),
	policy.FloatAttr("slowCallRateThreshold", func(c *Config) *float64 { return &c.SlowCallRateThreshold }),
	policy.BoolAttr("enabled", func(c *Config) *bool { return &c.Enabled }),
}}

func setWindowType(c *Config, v string) error {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "COUNT_BASED":
		c.SlidingWindowType = CountBased
	case "TIME_BASED":
		c.SlidingWindowType = TimeBased
	default:
		return &policy.ConfigError{Code: policy.CodeOutOfRange, Value: v,
			Reason: `not a sliding window type: use "COUNT_BASED" or "TIME_BASED"`}
	}
	return nil
}

// Settings is what options produce: the configuration and how the instance is named,
// timed and observed.
type Settings struct {
	Config
	policy.Common
}

// DefaultSettings returns settings holding DefaultConfig.
func DefaultSettings() Settings { return Settings{Config: DefaultConfig()} }

// Option configures a breaker.
type Option func(*Settings)

// Apply applies opts in order; nil options are skipped.
func (s *Settings) Apply(opts ...Option) {
	for _, o := range opts {
		if o != nil {
			o(s)
		}
	}
}

// FailureRateThreshold sets the failure rate, in percent, at or above which the breaker
// opens [50]. In (0, 100], else R4C-ATR-007.
func FailureRateThreshold(percent float64) Option {
	return func(s *Settings) { s.FailureRateThreshold = percent }
}

// SlidingWindowSize sets the closed-state window [100]: the last n calls, or with
// SlidingWindowType(TimeBased) the calls of the last n seconds. In [1, MaxWindowSize],
// else R4C-ATR-007.
func SlidingWindowSize(n int) Option { return func(s *Settings) { s.SlidingWindowSize = n } }

// SlidingWindowType sets whether the window counts calls (CountBased) or seconds
// (TimeBased) [CountBased].
func SlidingWindowType(t WindowType) Option { return func(s *Settings) { s.SlidingWindowType = t } }

// MinimumCalls sets how many outcomes the window must hold before its rates can open the
// breaker [100]; capped at the window size for count-based windows. ≥ 1, else R4C-ATR-007.
func MinimumCalls(n int) Option { return func(s *Settings) { s.MinimumCalls = n } }

// WaitInOpen sets how long the breaker stays open before the next call moves it to
// half-open [60s]. ≥ 0, else R4C-ATR-004.
func WaitInOpen(d time.Duration) Option { return func(s *Settings) { s.WaitInOpen = d } }

// PermittedInHalfOpen sets the number of trial calls in half-open [10]. ≥ 1, else
// R4C-ATR-007.
func PermittedInHalfOpen(n int) Option { return func(s *Settings) { s.PermittedInHalfOpen = n } }

// SlowCallThreshold sets the duration above which a call counts as slow [60s].
// Negative: R4C-ATR-004; zero: R4C-ATR-007.
func SlowCallThreshold(d time.Duration) Option { return func(s *Settings) { s.SlowCallThreshold = d } }

// SlowCallRateThreshold sets the slow-call rate, in percent, at or above which the breaker
// opens [100]. In (0, 100], else R4C-ATR-007.
func SlowCallRateThreshold(percent float64) Option {
	return func(s *Settings) { s.SlowCallRateThreshold = percent }
}

// IgnoreOn adds errors (matched with errors.Is) that count neither as success nor as
// failure [none]; in half-open, an ignored call gives its trial slot back. Nil errors are
// skipped. IgnoreOn wins over RecordOn.
func IgnoreOn(errs ...error) Option {
	return func(s *Settings) { s.IgnoreOn = appendErrors(s.IgnoreOn, errs) }
}

// RecordOn adds errors (matched with errors.Is) that count as failures; once any is set,
// every other error counts as a success [empty: every error is a failure]. Nil errors are
// skipped.
func RecordOn(errs ...error) Option {
	return func(s *Settings) { s.RecordOn = appendErrors(s.RecordOn, errs) }
}

// appendErrors returns list followed by the non-nil errs, never writing into list's
// backing array (Settings are copied by value).
func appendErrors(list, errs []error) []error {
	list = slices.Clip(list)
	for _, e := range errs {
		if e != nil {
			list = append(list, e)
		}
	}
	return list
}

// Enabled false makes the breaker start Disabled: every call passes and nothing is
// recorded [true].
func Enabled(on bool) Option { return func(s *Settings) { s.Enabled = on } }

// Name shares one breaker among every function wrapped with this name; the name is the
// instance id (SPEC RG-1, RG-2).
func Name(name string) Option { return func(s *Settings) { s.Common.Name = name } }

// UseConfig applies the keys configs.<name>.circuitBreaker.* (SPEC RG-4).
func UseConfig(name string) Option { return func(s *Settings) { s.ConfigName = name } }

// WithClock sets the time source [clock.System()]. A registry sets its own (SPEC RG-6).
func WithClock(c clock.Clock) Option { return func(s *Settings) { s.Clock = c } }

// WithInstanceID sets the instance id of a breaker built with New [the Name, else
// "circuitbreaker"].
func WithInstanceID(id string) Option { return func(s *Settings) { s.InstanceID = id } }

// OnEvent sets the listener of the breaker's events (SPEC RG-5): CircuitBreakerTransition
// (From and To are State names, At the clock time) and CircuitBreakerRejected (Err is the
// rejection; in Open, Wait is the time left before half-open). Successes publish nothing.
// Transition events reach the listener in the order of the transitions: while one runs,
// the next transition waits. A listener may read State and Snapshot, but must not make
// the breaker change state (ForceOpen, Disable, Reset, or calls through it), which would
// wait for itself.
func OnEvent(l policy.Listener) Option { return func(s *Settings) { s.Listener = l } }
