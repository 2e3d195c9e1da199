package circuitbreaker

import (
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// Layer is the circuit breaker's layer, after the retry or hedge in the default order, and
// the segment of its configuration keys ("circuitBreaker" in defaults.circuitBreaker.…).
//
// In the default order the breaker sits inside the retry and outside the rate limiter:
// a call it rejects never reaches the rate limiter or the layers inside it, so it spends
// no permit, and an outer retry never retries its rejection. Rejections of inner layers
// are errors like any other: add ratelimit.ErrExceeded to IgnoreOn so that your own
// limiter does not open your breaker.
const Layer policy.Layer = "circuitBreaker"

// The sliding window's types, as SlidingWindowType and the configuration key
// circuitBreaker.slidingWindowType spell them (in any case).
const (
	// CountBased ("COUNT_BASED"): the window holds the outcomes of the last
	// SlidingWindowSize calls.
	CountBased = "COUNT_BASED"
	// TimeBased ("TIME_BASED"): the window holds the outcomes of the calls of the last
	// SlidingWindowSize seconds, aggregated in 1-second buckets on the breaker's clock.
	TimeBased = "TIME_BASED"
)

// maxWindowSize is the largest SlidingWindowSize (calls for a count-based window, seconds
// for a time-based one): the window's memory is allocated when the breaker is built.
const maxWindowSize = 1_000_000

// Config is a breaker's configuration in force, as Breaker.Config returns it: read-only,
// set with the options (or the configuration keys circuitBreaker.*). Every setting but
// SlidingWindowType can change on a running breaker, when a registry's Reload changes its
// configuration keys.
//
// A registry's Reload replaces the configuration of a running breaker whose configuration
// keys changed, atomically: a call reads the configuration in force once, when it is
// admitted, and classifies its outcome by it (its error lists and SlowCallThreshold), so
// a call in flight keeps the configuration it started with; the rates are compared with
// the thresholds in force when an outcome is recorded. Every setting changes live but the
// sliding window's type:
//   - the thresholds (failure rate, slow-call rate), MinimumCalls and the error lists,
//     from the next call or outcome; the window keeps its outcomes;
//   - WaitInOpen and MaxWaitInHalfOpen, from the next transition: a breaker already open
//     or half-open keeps the deadline it was given;
//   - PermittedInHalfOpen, from the next call (lowered while half-open, the trials in
//     flight are waited for, and the trials recorded then decide);
//   - SlidingWindowSize, at once, keeping the most recent outcomes that fit;
//   - enabled, at once: the breaker goes to its new initial state, as Reset does.
//
// SlidingWindowType cannot change on a running breaker (its window's outcomes cannot be
// converted from calls to seconds or back): the reload is refused with R4C-REG-012 and
// changes nothing. An invalid configuration is refused with the error New would return
// and changes nothing. A change publishes a ConfigChanged event naming the attributes
// that changed, by their configuration names; a configuration equal to the one in force
// publishes nothing. The events of a reload (its ConfigChanged, and a transition it
// makes) reach a recorder with context.Background(). A reload checks the new
// configurations of every instance it changes before it applies any.
//
// Durations saturate: a WaitInOpen, MaxWaitInHalfOpen or SlowCallThreshold of about 292
// years (the largest time.Duration) puts its deadline at the end of the clock's range,
// and no deadline, wait or measured duration wraps around into a negative one.
type Config struct {
	// FailureRateThreshold is the failure rate, in percent, at or above which the breaker
	// opens. In (0, 100]. Default 50. It stands for the decimal written, and the rate is
	// compared with it exactly (failed × 100 ≥ threshold × calls, in whole numbers), so no
	// float64 rounding of failed × 100 / calls decides; the same for SlowCallRateThreshold.
	FailureRateThreshold float64
	// SlidingWindowType says whether SlidingWindowSize counts calls (CountBased,
	// "COUNT_BASED") or seconds (TimeBased, "TIME_BASED"), spelt in upper case. Default
	// CountBased. It cannot change on a running breaker: a reload that changes it is
	// refused with R4C-REG-012.
	SlidingWindowType string
	// SlidingWindowSize is the closed-state window: the last n calls (CountBased) or the
	// calls of the last n seconds (TimeBased). In [1, 1,000,000]. Default 100.
	SlidingWindowSize int
	// MinimumCalls is how many outcomes the window must hold before its rates count. At
	// least 1. With a count-based window it is capped at SlidingWindowSize. Default 100.
	MinimumCalls int
	// WaitInOpen is how long the breaker stays open before the next call moves it to
	// half-open. At least 0. Default 60s.
	WaitInOpen time.Duration
	// PermittedInHalfOpen is the number of trial calls in half-open. At least 1.
	// Default 10.
	PermittedInHalfOpen int
	// MaxWaitInHalfOpen is the longest the breaker stays half-open: if its trial calls
	// have not all completed that long after it went half-open (a trial that never
	// returns, a future that never completes), it gives up on them and is open again, from
	// that instant, for another WaitInOpen; their outcomes are not recorded. Positive:
	// unlike Resilience4j's maxWaitDurationInHalfOpenState, whose 0 waits for the trials
	// for ever, no value leaves the breaker half-open for good. Set it above the longest a
	// trial call may take. Default 60s.
	MaxWaitInHalfOpen time.Duration
	// SlowCallThreshold is the duration above which a call counts as slow; 0 means no
	// call is slow: the breaker does not measure calls (it reads its clock only when a
	// state or a time-based window needs it, or for a recorder that wants latencies). At
	// least 0. Default 0: no slow-call detection, unlike Resilience4j, whose
	// slowCallDurationThreshold defaults to 60s.
	SlowCallThreshold time.Duration
	// SlowCallRateThreshold is the slow-call rate, in percent, at or above which the
	// breaker opens; it matters only when SlowCallThreshold is set (without it no call is
	// slow and the rate stays 0). In (0, 100]. Default 100.
	SlowCallRateThreshold float64
	// IgnoreOn lists errors (matched with errors.Is) that count neither as success nor as
	// failure. Set in code only; no configuration attribute. Default empty.
	IgnoreOn []error
	// RecordOn, when not empty, lists the only errors (matched with errors.Is) that count
	// as failures; other errors count as successes. IgnoreOn wins over RecordOn and
	// RecordIf. Set in code only; no configuration attribute. Default empty: every error
	// is a failure.
	RecordOn []error
	// Disabled true makes the breaker start in the disabled state: every call passes and
	// nothing is recorded; Reset returns to it. Default false. The configuration key is
	// circuitBreaker.enabled (its negation). Changed on a running breaker, it moves the
	// breaker to its new initial state at once, as Reset does.
	Disabled bool
	// Shadow true lets every call through and still decides each as usual: a call the
	// breaker would refuse runs, holding no half-open trial, its outcome left out of the
	// window, and is counted and published as a rejection in shadow (see the Shadow
	// option). Default false. The configuration key is circuitBreaker.shadow; a reload
	// changes it on a running breaker, for the calls that arrive after the change.
	Shadow bool
}

// defaultConfig returns the built-in defaults: failure rate 50%, a count-based window of
// 100 calls, 100 minimum calls, 60s open, 10 half-open trials given at most 60s, no
// slow-call detection (SlowCallThreshold 0; Resilience4j's default is 60s), slow rate
// 100%, no error lists, enabled.
func defaultConfig() Config {
	return Config{
		FailureRateThreshold:  50,
		SlidingWindowType:     CountBased,
		SlidingWindowSize:     100,
		MinimumCalls:          100,
		WaitInOpen:            60 * time.Second,
		PermittedInHalfOpen:   10,
		MaxWaitInHalfOpen:     60 * time.Second,
		SlowCallThreshold:     0,
		SlowCallRateThreshold: 100,
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

// validate checks the configuration and returns a *policy.ConfigError:
//   - R4C-ATR-007: a percentage outside (0, 100] (failureRateThreshold,
//     slowCallRateThreshold), a count below 1 (slidingWindowSize, minimumCalls,
//     permittedInHalfOpen), slidingWindowSize above maxWindowSize, an unknown
//     slidingWindowType, or maxWaitInHalfOpen = 0;
//   - R4C-ATR-004: a negative duration (waitInOpen, maxWaitInHalfOpen,
//     slowCallThreshold).
func (c Config) validate() error {
	return r4c.First(
		percentage("failureRateThreshold", c.FailureRateThreshold),
		c.windowErr(),
		r4c.AtLeast("circuitBreaker.minimumCalls", c.MinimumCalls, 1, ""),
		r4c.NotNegative("circuitBreaker.waitInOpen", c.WaitInOpen, ""),
		r4c.AtLeast("circuitBreaker.permittedInHalfOpen", c.PermittedInHalfOpen, 1, ""),
		r4c.Positive("circuitBreaker.maxWaitInHalfOpen", c.MaxWaitInHalfOpen, "0 would give up on every trial call at once"),
		r4c.NotNegative("circuitBreaker.slowCallThreshold", c.SlowCallThreshold, ""),
		percentage("slowCallRateThreshold", c.SlowCallRateThreshold),
	)
}

// windowErr checks the sliding window's type and size, as validate says.
func (c Config) windowErr() error {
	switch {
	case c.SlidingWindowType != CountBased && c.SlidingWindowType != TimeBased:
		return r4c.Errorf(r4c.OutOfRange, "circuitBreaker.slidingWindowType", c.SlidingWindowType,
			"slidingWindowType must be COUNT_BASED or TIME_BASED")
	case c.SlidingWindowSize < 1 || c.SlidingWindowSize > maxWindowSize:
		return r4c.Errorf(r4c.OutOfRange, "circuitBreaker.slidingWindowSize", strconv.Itoa(c.SlidingWindowSize),
			"slidingWindowSize must be at least 1 and at most %d", maxWindowSize)
	}
	return nil
}

// percentage returns nil when p, the value of attribute attr, is a percentage above 0 and
// at most 100 (NaN is not), else an R4C-ATR-007 error.
func percentage(attr string, p float64) error {
	if p > 0 && p <= 100 {
		return nil
	}
	return r4c.Errorf(r4c.OutOfRange, "circuitBreaker."+attr, r4c.FormatFloat(p), "%s must be a percentage above 0 and at most 100", attr)
}

// settings is what options produce: the configuration and how the instance is named,
// timed and observed.
type settings struct {
	Config
	contract.Common
	recordIf *contract.Predicate // RecordIf's predicate; nil: none. Not in Config, so that
	// a reload keeps it.
	fleet Fleet // WithFleet's; nil: none. Not in Config either.
}

func defaults() settings { return settings{Config: defaultConfig()} }

// descriptor is how a registry sees circuit breakers.
var descriptor = contract.Conventional(&contract.Descriptor[settings]{
	L: Layer,
	Attrs: []contract.Attr[settings]{
		contract.FloatAttr("failureRateThreshold", func(s *settings) *float64 { return &s.FailureRateThreshold }),
		contract.IntAttr("slidingWindowSize", func(s *settings) *int { return &s.SlidingWindowSize }),
		{Name: "slidingWindowType", Set: func(s *settings, v string) error { return setWindowType(&s.Config, v) },
			Value: contract.EnumValue, Enum: []contract.Enum{{Spelling: "COUNT_BASED", Const: "CountBased"}, {Spelling: "TIME_BASED", Const: "TimeBased"}}},
		contract.IntAttr("minimumCalls", func(s *settings) *int { return &s.MinimumCalls }),
		contract.DurationAttr("waitInOpen", func(s *settings) *time.Duration { return &s.WaitInOpen }),
		contract.IntAttr("permittedInHalfOpen", func(s *settings) *int { return &s.PermittedInHalfOpen }),
		contract.DurationAttr("maxWaitInHalfOpen", func(s *settings) *time.Duration { return &s.MaxWaitInHalfOpen }),
		contract.DurationAttr("slowCallThreshold", func(s *settings) *time.Duration { return &s.SlowCallThreshold }),
		contract.FloatAttr("slowCallRateThreshold", func(s *settings) *float64 { return &s.SlowCallRateThreshold }),
		contract.EnabledAttr(func(s *settings) *bool { return &s.Disabled }),
		contract.ShadowAttr(func(s *settings) *bool { return &s.Shadow }),
	},
	Defaults: defaults,
	Config:   func(s *settings) any { return contract.Shared[Config]{Config: s.Config, If: s.recordIf} },
	State:    contract.Typed((*Breaker).Snapshot),
	Result:   func(s *settings) reflect.Type { return s.recordIf.ResultType() },
	Metrics:  metrics,

	Compose: contract.Composition{Rank: 40, Live: live},
	CodeAttrs: []contract.Param{
		{Name: "recordOn", Option: "RecordOn", Value: contract.ErrorsValue},
		{Name: "ignoreOn", Option: "IgnoreOn", Value: contract.ErrorsValue},
	},
}, build, (*settings).validate,
	func(b *Breaker) string { return b.events.ID },
	func(b *Breaker) contract.Shared[Config] {
		return contract.Shared[Config]{Config: b.Config(), If: b.recordIf}
	})

func init() { contract.Register(descriptor) }

func setWindowType(c *Config, v string) error {
	switch t := strings.ToUpper(strings.TrimSpace(v)); t {
	case CountBased, TimeBased:
		c.SlidingWindowType = t
	default:
		return &policy.ConfigError{Code: r4c.OutOfRange, Value: v,
			Reason: `not a sliding window type: use "COUNT_BASED" or "TIME_BASED"`}
	}
	return nil
}

// Option configures a breaker.
type Option func(*settings)

// Enabled false makes the breaker start in the disabled state: every call passes and
// nothing is recorded. Default true.
func Enabled(on bool) Option { return func(s *settings) { s.Disabled = !on } }

// Shadow true puts the breaker in shadow mode, a dark launch: it decides every call as
// usual and refuses none of its own accord. A call it would refuse (open, or half-open
// with every trial taken) runs: it takes no half-open trial and its outcome is not counted in
// the window nor in the trials, so that the breaker's state moves exactly as without
// shadow mode; it publishes the EventRejected event it would have had, with the attribute
// "shadow" (true), and is counted in Snapshot.ShadowRejected (and in NotPermittedCalls,
// as it would have been) and in the metric resilience.circuit_breaker.shadow_rejections.
// A registry's observer records it as what happened: ResultSucceeded, ResultFailed or
// ResultIgnored, as the breaker would classify it, with its latency. Default false. The
// configuration key is circuitBreaker.shadow; a reload changes it live. A breaker forced
// open (TransitionTo(ForcedOpen)) still rejects every call: that state is an operator's
// decision, not the breaker's.
func Shadow(on bool) Option { return func(s *settings) { s.Shadow = on } }

// FailureRateThreshold sets the failure rate, in percent, at or above which the breaker
// opens. Default 50. Outside (0, 100] fails with R4C-ATR-007.
func FailureRateThreshold(percent float64) Option {
	return func(s *settings) { s.FailureRateThreshold = percent }
}

// SlidingWindowSize sets the closed-state window: the last n calls, or with
// SlidingWindowType(TimeBased) the calls of the last n seconds. Default 100. Outside
// [1, 1,000,000] fails with R4C-ATR-007 (the window's memory is allocated when the
// breaker is built).
func SlidingWindowSize(n int) Option { return func(s *settings) { s.SlidingWindowSize = n } }

// SlidingWindowType sets whether the window counts calls (CountBased, "COUNT_BASED") or
// seconds (TimeBased, "TIME_BASED"), in any case, as the configuration key
// circuitBreaker.slidingWindowType reads it. Default CountBased. Another value fails with
// R4C-ATR-007.
func SlidingWindowType(t string) Option {
	t = strings.ToUpper(strings.TrimSpace(t))
	return func(s *settings) { s.SlidingWindowType = t }
}

// MinimumCalls sets how many outcomes the window must hold before its rates can open the
// breaker; capped at the window size for count-based windows. Default 100. Less than 1
// fails with R4C-ATR-007.
func MinimumCalls(n int) Option { return func(s *settings) { s.MinimumCalls = n } }

// WaitInOpen sets how long the breaker stays open before the next call moves it to
// half-open, on the breaker's clock. Default 60s. Negative fails with R4C-ATR-004.
func WaitInOpen(d time.Duration) Option { return func(s *settings) { s.WaitInOpen = d } }

// PermittedInHalfOpen sets the number of trial calls in half-open. Default 10. Less than
// 1 fails with R4C-ATR-007.
func PermittedInHalfOpen(n int) Option { return func(s *settings) { s.PermittedInHalfOpen = n } }

// MaxWaitInHalfOpen sets the longest the breaker stays half-open, on the breaker's clock:
// if its trial calls have not all completed d after it went half-open, it gives up on
// them and is open again from that instant, for another WaitInOpen; the outcomes of
// those trials are not recorded, even when they complete later. Set d above the longest
// a trial call may take. Default 60s. The configuration key is
// circuitBreaker.maxWaitInHalfOpen (Resilience4j's maxWaitDurationInHalfOpenState,
// except that 0 is not "wait for ever"): negative fails with R4C-ATR-004, zero with
// R4C-ATR-007.
func MaxWaitInHalfOpen(d time.Duration) Option { return func(s *settings) { s.MaxWaitInHalfOpen = d } }

// SlowCallThreshold sets the duration above which a call counts as slow (strictly
// longer), on the breaker's clock; 0 turns slow-call detection off. With a threshold
// set, every call admitted while closed reads the clock twice, at its start and at its
// end, to measure its duration; with none, it reads the clock only when its outcome needs
// the time (a time-based window's bucket, a transition) or for a recorder that wants
// latencies. The configuration key is circuitBreaker.slowCallThreshold, where "0" or
// "0s" is off. Default 0: off, unlike Resilience4j's slowCallDurationThreshold, which
// defaults to 60s (set 60s for its behaviour). Negative fails with R4C-ATR-004.
func SlowCallThreshold(d time.Duration) Option { return func(s *settings) { s.SlowCallThreshold = d } }

// SlowCallRateThreshold sets the slow-call rate, in percent, at or above which the breaker
// opens. It matters only with a SlowCallThreshold: without one no call is slow. Default
// 100. Outside (0, 100] fails with R4C-ATR-007.
func SlowCallRateThreshold(percent float64) Option {
	return func(s *settings) { s.SlowCallRateThreshold = percent }
}

// IgnoreOn adds errors (matched with errors.Is) that count neither as success nor as
// failure. Default empty. In half-open, an ignored call gives its trial slot back. Nil
// errors are skipped; each call adds to the list. IgnoreOn wins over RecordOn and
// RecordIf.
func IgnoreOn(errs ...error) Option {
	return func(s *settings) { s.IgnoreOn = contract.Append(s.IgnoreOn, errs) }
}

// RecordOn adds errors (matched with errors.Is) that count as failures; once any is set,
// every other error counts as a success. Default empty: every error is a failure. Nil
// errors are skipped; each call adds to the list.
func RecordOn(errs ...error) Option {
	return func(s *settings) { s.RecordOn = contract.Append(s.RecordOn, errs) }
}

// RecordIf records as failures the outcomes for which pred returns true, in addition to
// the errors the lists record: e.g. a response with status 503 returned with a nil error.
// T must be the result type of the calls the breaker decorates; wrapping a function of
// another result type fails with R4C-REG-010. Default none. A later call replaces the
// predicate; a nil pred removes it. pred must be quick and safe for concurrent use; if it
// panics, the call is recorded as a failure and the panic goes on.
func RecordIf[T any](pred func(v T, err error) bool) Option {
	p := contract.NewPredicate(pred)
	return func(s *settings) { s.recordIf = p }
}

// Name shares one breaker among every function wrapped with this name; the name is the
// instance id, also of a breaker built with New. Default none: each wrapped function has
// its own breaker, whose id is the function's id (a breaker built with New has no id,
// "").
func Name(name string) Option { return contract.Name[settings](name) }

// UseConfig applies the configuration keys configs.<name>.circuitBreaker.*, which take
// precedence over the options in code. Default none. A name with no such keys fails with
// R4C-REG-004 when the function is wrapped.
func UseConfig(name string) Option { return contract.UseConfig[settings](name) }

// WithClock sets the time source. Default clock.System(). A registry sets its own.
func WithClock(c clock.Clock) Option { return contract.WithClock[settings](c) }

// OnEvent sets the listener of the breaker's events: EventTransition (its attributes
// "from" and "to" name the states, e.g. Closed and Open; At is the clock time of the
// transition: for half-open→open after MaxWaitInHalfOpen, the instant the breaker gave up
// on its trials, which may be before the call that found it out), EventRejected (Err is
// the rejection, matching ErrOpen; RetryAfter is, in the open state, the time left before
// a call may go half-open, and 0 when forced open or half-open with every trial taken)
// and ConfigChanged (a reload changed the configuration; Changed names the attributes).
// Admitted calls, and calls refused because their context was nil or done, publish
// nothing. Default none: nothing is published. A registry adds its own listeners.
// Transition and ConfigChanged events reach the listener in the order of the changes:
// while one runs, the next change waits. A listener may read Snapshot and Config, but
// must not make the breaker change state or configuration (TransitionTo, Reset, a reload,
// or calls through it), which would wait for itself.
func OnEvent(l policy.Listener) Option { return contract.OnEvent[settings](l) }
