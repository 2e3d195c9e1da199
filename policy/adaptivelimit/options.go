package adaptivelimit

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// Layer is the adaptive limit's layer, innermost in the default order, next to the function, and the segment of its configuration keys
// ("adaptiveLimit" in defaults.adaptiveLimit.…).
const Layer policy.Layer = "adaptiveLimit"

// The algorithms that move the limit, as UseAlgorithm and the configuration key
// adaptiveLimit.algorithm spell them (in any case).
//
// The algorithm moves the limit once per round, not once per sample (NewPolicy tells what
// a sample is): the effect of a limit shows only in the latency of the calls let in under
// it. A round ends with the first sample of a call let in after the round began (so that
// it spans at least one call's latency), once it holds at least half as many samples as
// the most calls that were in flight with one of them. It sums up its samples: their
// average latency, the most calls in flight and the drops. Samples of calls let in before
// the limit last changed are left out: they tell of the old limit, as TCP reacts to a
// loss once per window. A round whose calls never used half the limit is app-limited: it
// says nothing of whether the limit could be higher, so the limit holds (but for a drop,
// with AIMD and Vegas).
//
// lg is max(1, log10(limit)); the baseline is the smallest of the rounds' average
// latencies over the last BaselineWindow to 2·BaselineWindow rounds: the latency of calls
// that do not queue, which the latency-based algorithms compare each round with.
//
//   - AIMD (additive increase, multiplicative decrease, as TCP's congestion avoidance): a
//     round with a drop multiplies the limit by BackoffRatio; one without adds 1. It
//     knows no latency but LatencyThreshold, which must fit the dependency: its default,
//     5s, only catches calls that are failing already.
//   - Gradient2: the gradient is Tolerance·baseline/latency, kept within [0.5, 1]; the
//     limit becomes limit·(1−Smoothing) + (limit·gradient + √limit)·Smoothing: a
//     latency within Tolerance of the baseline grows the limit by its headroom √limit, a
//     longer one shrinks it. Drops count by their latency only.
//   - Vegas (as TCP Vegas): the calls queued at the dependency are estimated as
//     limit·(1 − baseline/latency). A queue of at most lg adds 6·lg (nothing queues: grow
//     fast), one below 3·lg adds lg, one above 6·lg takes lg away, one in between holds
//     the limit; a round with a drop takes lg away.
//
// Where they differ from Netflix's: they move once per round rather than once per sample
// (moved per sample, with their feedback a latency late, they overshoot), and Gradient2's
// long-term latency is the baseline above, not an exponential average of the latencies:
// under an overload that lasts, such an average follows the latency up, and the limit
// with it (with one over 100 rounds in its place, the overload of this package's
// convergence test took the limit from 20 to 84 in 10,000 calls). The baseline forgets a
// latency after at most 2·BaselineWindow rounds, as Netflix's Vegas probes for a new one,
// so that it follows a dependency that became slower for good; the same forgetting may
// let the limit creep up under a queue that never drains for that long.
//
// Vegas is the default, as in Netflix's library. It needs no threshold fitted to the
// dependency (AIMD does), it measures the queue itself rather than a ratio with a
// tolerance, and it grows fastest when the dependency has room: with the load of this
// package's convergence test, once the dependency was fast, the limit passed 50 within
// about 190 calls, against about 1,260 for Gradient2 and 1,500 for AIMD (with
// LatencyThreshold 50ms). Its cost: a sawtooth (there, between 19 and 28 for a knee at
// 20), and a slow descent, lg per round, from a limit far above what the dependency takes
// when no call is dropped. Gradient2 holds steadiest (there, 20 to 21).
const (
	// AIMD ("aimd") adds 1 to the limit after each round without a drop (whose calls used
	// at least half the limit), and multiplies it by BackoffRatio after a round with one
	// (a call slower than LatencyThreshold is a drop).
	AIMD = "aimd"
	// Gradient2 ("gradient2") compares each round's average latency with the baseline
	// (the smallest round average of the recent rounds), allowing Tolerance of
	// difference, and moves the limit by that ratio, smoothed.
	Gradient2 = "gradient2"
	// Vegas ("vegas") estimates the queue at the dependency from each round's average
	// latency and the baseline, and keeps that queue small. The default.
	Vegas = "vegas"
)

// algorithms lists the valid algorithms, in the order messages name them.
var algorithms = []string{AIMD, Gradient2, Vegas}

// maxLimitCeiling is the largest MaxLimit: calls in flight are counted in 32 bits.
const maxLimitCeiling = 1_000_000

// Config is an adaptive limiter's configuration, as Limiter.Config returns it: read-only,
// set with the options (or the configuration keys adaptiveLimit.*), and fixed when the
// limiter is built. Two identical option sets give configurations equal under
// reflect.DeepEqual (error lists hold the same sentinel values).
type Config struct {
	// Algorithm moves the limit: AIMD, Gradient2 or Vegas, in lower case. Default Vegas.
	Algorithm string
	// InitialLimit is the limit on calls in flight when the limiter is built. In
	// [MinLimit, MaxLimit]. Default 20.
	InitialLimit int
	// MinLimit is the lowest the limit goes. At least 1. Default 1.
	MinLimit int
	// MaxLimit is the highest the limit goes. In [MinLimit, 1,000,000]. Default 200.
	MaxLimit int
	// MaxWait is how long a call over the limit may wait for room, on the limiter's
	// clock; 0 rejects at once. At least 0. Default 0.
	MaxWait time.Duration
	// BackoffRatio is the factor AIMD multiplies the limit by after a round with a drop.
	// In [0.5, 1). Default 0.9. It stands for the decimal written, and the whole-number
	// limit after a backoff is the whole part of the exact product: 100 × 0.57 gives 57,
	// not the 56 of float64's 56.99999999999999.
	BackoffRatio float64
	// LatencyThreshold is, for AIMD, the latency above which a call counts as a drop.
	// Positive. Default 5s.
	LatencyThreshold time.Duration
	// Tolerance is, for Gradient2, how much longer than the baseline a round's average
	// latency may be before the limit goes down: 1.5 allows 50% more. At least 1 and
	// finite. Default 1.5.
	Tolerance float64
	// Smoothing is, for Gradient2, the weight of each round's new estimate in the limit:
	// 1 takes it whole, 0.2 moves a fifth of the way. In (0, 1]. Default 0.2.
	Smoothing float64
	// BaselineWindow is, for Gradient2 and Vegas, how many rounds the baseline latency
	// remembers: it is the smallest of the rounds' average latencies over the last
	// BaselineWindow to 2·BaselineWindow rounds. At least 1. Default 50.
	BaselineWindow int
	// PriorityReserve is the fraction of the limit kept for the calls of
	// policy.PriorityCritical and above (the priority of a call that carries none, see
	// policy.WithPriority): a call of policy.PrioritySheddable is let in only while fewer
	// than limit·(1−PriorityReserve) calls are in flight, one of
	// policy.PrioritySheddablePlus while fewer than limit·(1−PriorityReserve/2), rounded
	// down, but at least 1 (a call of any priority is let in when none is in flight);
	// limit is the limit in force. Calls that wait are let in highest priority first. 0
	// lets every priority use the whole limit (the queue still goes by priority). In
	// [0, 1], taken to the nearest millionth. Default 0.5.
	PriorityReserve float64
	// DropOn lists errors (matched with errors.Is) that count as drops, besides
	// context.DeadlineExceeded. Set in code only; no configuration attribute. Default
	// empty.
	DropOn []error
	// IgnoreOn lists errors (matched with errors.Is) whose calls leave no sample: neither
	// their latency nor a drop is recorded. It wins over DropOn. Calls canceled by their
	// caller (async.ErrCanceled, context.Canceled) are ignored without being listed. Set
	// in code only; no configuration attribute. Default empty.
	IgnoreOn []error
	// Disabled true lets every call through without counting it. Default false. The
	// configuration key is adaptiveLimit.enabled (its negation).
	Disabled bool
	// Shadow true lets every call through and still decides each as usual: a call that
	// finds no room at once runs at once, holding none and leaving no sample, and is
	// counted and published as a rejection in shadow (see the Shadow option). Default
	// false. The configuration key is adaptiveLimit.shadow; a reload changes it on a
	// running limiter, the one setting that it changes live.
	Shadow bool
}

// defaultConfig returns the built-in defaults: Vegas, limits 20 (initial), 1 (min) and
// 200 (max), MaxWait 0, BackoffRatio 0.9, LatencyThreshold 5s, Tolerance 1.5, Smoothing
// 0.2, BaselineWindow 50, PriorityReserve 0.5, no error lists, enabled.
func defaultConfig() Config {
	return Config{
		Algorithm:        Vegas,
		InitialLimit:     20,
		MinLimit:         1,
		MaxLimit:         200,
		BackoffRatio:     0.9,
		LatencyThreshold: 5 * time.Second,
		Tolerance:        1.5,
		Smoothing:        0.2,
		BaselineWindow:   50,
		PriorityReserve:  0.5,
	}
}

// validate checks the configuration and returns a *policy.ConfigError:
//   - R4C-ATR-007: an unknown algorithm (the message lists the valid ones), MinLimit < 1,
//     MaxLimit below MinLimit or above maxLimitCeiling, InitialLimit outside
//     [MinLimit, MaxLimit], BackoffRatio outside [0.5, 1), a zero LatencyThreshold,
//     Tolerance below 1 or not finite, Smoothing outside (0, 1], BaselineWindow < 1,
//     PriorityReserve outside [0, 1];
//   - R4C-ATR-004: a negative MaxWait or LatencyThreshold.
//
// The parameters of every algorithm are checked, whichever is chosen.
func (c Config) validate() error {
	switch {
	case !validAlgorithm(c.Algorithm):
		return r4c.Errorf(r4c.OutOfRange, "adaptiveLimit.algorithm", c.Algorithm,
			"algorithm must be one of %s", choices())
	case c.MinLimit < 1:
		return r4c.Errorf(r4c.OutOfRange, "adaptiveLimit.minLimit", strconv.Itoa(c.MinLimit),
			"minLimit must be at least 1")
	case c.MaxLimit > maxLimitCeiling:
		return r4c.Errorf(r4c.OutOfRange, "adaptiveLimit.maxLimit", strconv.Itoa(c.MaxLimit),
			"maxLimit must be at most %d", maxLimitCeiling)
	case c.MaxWait < 0:
		return r4c.Errorf(r4c.NegativeDuration, "adaptiveLimit.maxWait", c.MaxWait.String(),
			"maxWait must not be negative")
	case !(c.BackoffRatio >= 0.5 && c.BackoffRatio < 1):
		return r4c.Errorf(r4c.OutOfRange, "adaptiveLimit.backoffRatio", r4c.FormatFloat(c.BackoffRatio),
			"backoffRatio must be at least 0.5 and below 1")
	case c.LatencyThreshold < 0:
		return r4c.Errorf(r4c.NegativeDuration, "adaptiveLimit.latencyThreshold", c.LatencyThreshold.String(),
			"latencyThreshold must not be negative")
	case c.LatencyThreshold == 0:
		return r4c.Errorf(r4c.OutOfRange, "adaptiveLimit.latencyThreshold", c.LatencyThreshold.String(),
			"latencyThreshold must be positive (0 would make every call a drop)")
	case !(c.Tolerance >= 1) || math.IsInf(c.Tolerance, 1):
		return r4c.Errorf(r4c.OutOfRange, "adaptiveLimit.tolerance", r4c.FormatFloat(c.Tolerance),
			"tolerance must be a finite number of at least 1")
	case !(c.Smoothing > 0 && c.Smoothing <= 1):
		return r4c.Errorf(r4c.OutOfRange, "adaptiveLimit.smoothing", r4c.FormatFloat(c.Smoothing),
			"smoothing must be above 0 and at most 1")
	case c.BaselineWindow < 1:
		return r4c.Errorf(r4c.OutOfRange, "adaptiveLimit.baselineWindow", strconv.Itoa(c.BaselineWindow),
			"baselineWindow must be at least 1")
	case !(c.PriorityReserve >= 0 && c.PriorityReserve <= 1):
		return r4c.Between("adaptiveLimit.priorityReserve", c.PriorityReserve, 0, 1)
	// The checks of one attribute against another come last, so that a value out of its
	// own range is found also when another value breaks such a relation.
	case c.MaxLimit < c.MinLimit:
		return r4c.Errorf(r4c.OutOfRange, "adaptiveLimit.maxLimit", strconv.Itoa(c.MaxLimit),
			"maxLimit must be at least minLimit (%d)", c.MinLimit)
	case c.InitialLimit < c.MinLimit || c.InitialLimit > c.MaxLimit:
		return r4c.Errorf(r4c.OutOfRange, "adaptiveLimit.initialLimit", strconv.Itoa(c.InitialLimit),
			"initialLimit must be between minLimit (%d) and maxLimit (%d)", c.MinLimit, c.MaxLimit)
	}
	return nil
}

func validAlgorithm(a string) bool { return slices.Contains(algorithms, a) }

// choices is `"aimd", "gradient2" or "vegas"`.
func choices() string {
	var b strings.Builder
	for i, a := range algorithms {
		switch {
		case i == len(algorithms)-1:
			b.WriteString(" or ")
		case i > 0:
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(a))
	}
	return b.String()
}

// settings is what options produce: the configuration and how the instance is named,
// timed and observed.
type settings struct {
	Config
	contract.Common
}

func defaults() settings { return settings{Config: defaultConfig()} }

// algorithmAttr is the attribute "algorithm": one of the algorithms, in any case and with
// surrounding spaces ignored; another value is R4C-ATR-007, whose message lists them.
func algorithmAttr() contract.Attr[settings] {
	return contract.Attr[settings]{Name: "algorithm", Option: "UseAlgorithm", Value: contract.EnumValue,
		Enum: []contract.Enum{{Spelling: "aimd", Const: "AIMD"}, {Spelling: "gradient2", Const: "Gradient2"}, {Spelling: "vegas", Const: "Vegas"}},
		Set: func(s *settings, v string) error {
			a := strings.ToLower(strings.TrimSpace(v))
			if !validAlgorithm(a) {
				return &policy.ConfigError{Code: r4c.OutOfRange, Value: v,
					Reason: "not an algorithm: use " + choices()}
			}
			s.Algorithm = a
			return nil
		}}
}

// attrs are the configuration attributes, which also name what a reload changes.
var attrs = []contract.Attr[settings]{
	algorithmAttr(),
	contract.IntAttr("initialLimit", func(s *settings) *int { return &s.InitialLimit }),
	contract.IntAttr("minLimit", func(s *settings) *int { return &s.MinLimit }),
	contract.IntAttr("maxLimit", func(s *settings) *int { return &s.MaxLimit }),
	contract.DurationAttr("maxWait", func(s *settings) *time.Duration { return &s.MaxWait }),
	contract.FloatAttr("backoffRatio", func(s *settings) *float64 { return &s.BackoffRatio }),
	contract.DurationAttr("latencyThreshold", func(s *settings) *time.Duration { return &s.LatencyThreshold }),
	contract.FloatAttr("tolerance", func(s *settings) *float64 { return &s.Tolerance }),
	contract.FloatAttr("smoothing", func(s *settings) *float64 { return &s.Smoothing }),
	contract.IntAttr("baselineWindow", func(s *settings) *int { return &s.BaselineWindow }),
	contract.FloatAttr("priorityReserve", func(s *settings) *float64 { return &s.PriorityReserve }),
	contract.EnabledAttr(func(s *settings) *bool { return &s.Disabled }),
	contract.ShadowAttr(func(s *settings) *bool { return &s.Shadow }),
}

// descriptor is how a registry sees adaptive limiters.
var descriptor = contract.Conventional(&contract.Descriptor[settings]{
	L:        Layer,
	Attrs:    attrs,
	Defaults: defaults,
	Config:   func(s *settings) any { return s.Config },
	State:    contract.Typed((*Limiter).Snapshot),
	Metrics:  metrics,

	Compose: contract.Composition{Rank: 80, Live: live},
	CodeAttrs: []contract.Param{
		{Name: "dropOn", Option: "DropOn", Value: contract.ErrorsValue},
		{Name: "ignoreOn", Option: "IgnoreOn", Value: contract.ErrorsValue},
	},
}, build, (*settings).validate,
	func(l *Limiter) string { return l.events.ID },
	(*Limiter).Config)

func init() { contract.Register(descriptor) }

// Option configures an adaptive limiter.
type Option func(*settings)

// Enabled false lets every call through without counting it. Default true.
func Enabled(on bool) Option { return func(s *settings) { s.Disabled = !on } }

// Shadow true puts the limiter in shadow mode, a dark launch: it decides every call as
// usual and rejects none. A call that finds no room at once (for its priority, and nobody
// of its priority or above waiting) runs at once, holding no room, instead of waiting or
// being rejected: it leaves no sample for the algorithm (its latency and outcome are not
// counted), so the limit moves as it would have; it publishes the EventRejected event it
// would have had at once, with the attribute "shadow" (true) after "priority" and
// "shed", is counted in Snapshot.ShadowRejected and in the metric
// resilience.adaptive_limit.shadow_rejections (and in Shed if it would have been shed),
// and is recorded as admitted (ResultAdmitted, Wait 0): it ran. Acquire returns a Permit
// that gives back nothing. Nothing waits in shadow mode: with MaxWait 0 the calls
// counted are exactly the ones the limiter would have rejected; with MaxWait > 0 they are
// the calls that would have waited. Default false. The configuration key is
// adaptiveLimit.shadow, which a reload changes live (the limiter's other settings are
// fixed when it is built).
func Shadow(on bool) Option { return func(s *settings) { s.Shadow = on } }

// UseAlgorithm sets the algorithm that moves the limit: AIMD, Gradient2 or Vegas ("aimd",
// "gradient2" or "vegas"), in any case, as the configuration key adaptiveLimit.algorithm
// reads it. Default Vegas. Another value fails with R4C-ATR-007, whose message lists the
// algorithms.
func UseAlgorithm(a string) Option {
	a = strings.ToLower(strings.TrimSpace(a))
	return func(s *settings) { s.Algorithm = a }
}

// InitialLimit sets the limit on calls in flight when the limiter is built. Default 20.
// Outside [MinLimit, MaxLimit] fails with R4C-ATR-007.
func InitialLimit(n int) Option { return func(s *settings) { s.InitialLimit = n } }

// MinLimit sets the lowest the limit goes. Default 1. Less than 1 fails with
// R4C-ATR-007.
func MinLimit(n int) Option { return func(s *settings) { s.MinLimit = n } }

// MaxLimit sets the highest the limit goes. Default 200. Below MinLimit, or above
// 1,000,000 (calls in flight are counted in 32 bits), fails with R4C-ATR-007.
func MaxLimit(n int) Option { return func(s *settings) { s.MaxLimit = n } }

// MaxWait sets how long a call over the limit may wait for room, on the limiter's
// clock. Default 0: reject at once. Negative fails with R4C-ATR-004.
func MaxWait(d time.Duration) Option { return func(s *settings) { s.MaxWait = d } }

// BackoffRatio sets the factor AIMD multiplies the limit by after a round with a drop.
// Default 0.9. Outside [0.5, 1) fails with R4C-ATR-007.
func BackoffRatio(r float64) Option { return func(s *settings) { s.BackoffRatio = r } }

// LatencyThreshold sets, for AIMD, the latency above which a call counts as a drop, on
// the limiter's clock. Default 5s. Negative fails with R4C-ATR-004, zero with
// R4C-ATR-007.
func LatencyThreshold(d time.Duration) Option { return func(s *settings) { s.LatencyThreshold = d } }

// Tolerance sets, for Gradient2, how much longer than the baseline a round's average
// latency may be before the limit goes down (1.5: 50% longer). Default 1.5. Below 1, or
// not finite, fails with R4C-ATR-007.
func Tolerance(f float64) Option { return func(s *settings) { s.Tolerance = f } }

// Smoothing sets, for Gradient2, the weight of each round's new estimate in the limit.
// Default 0.2. Outside (0, 1] fails with R4C-ATR-007.
func Smoothing(f float64) Option { return func(s *settings) { s.Smoothing = f } }

// BaselineWindow sets, for Gradient2 and Vegas, how many rounds the baseline latency
// remembers (it is the smallest round average of the last n to 2n rounds). Default 50.
// Less than 1 fails with R4C-ATR-007.
func BaselineWindow(n int) Option { return func(s *settings) { s.BaselineWindow = n } }

// PriorityReserve sets the fraction of the limit kept for the calls of
// policy.PriorityCritical and above (see Config.PriorityReserve): r for sheddable calls,
// r/2 for sheddable_plus ones. Default 0.5. Outside [0, 1] fails with R4C-ATR-007.
func PriorityReserve(r float64) Option { return func(s *settings) { s.PriorityReserve = r } }

// DropOn adds errors (matched with errors.Is) that count as drops, besides
// context.DeadlineExceeded: e.g. a dependency's "overloaded" error. Default empty. Nil
// errors are skipped; each call adds to the list.
func DropOn(errs ...error) Option {
	return func(s *settings) { s.DropOn = contract.Append(s.DropOn, errs) }
}

// IgnoreOn adds errors (matched with errors.Is) whose calls leave no sample. Default
// empty. Nil errors are skipped; each call adds to the list. IgnoreOn wins over DropOn.
func IgnoreOn(errs ...error) Option {
	return func(s *settings) { s.IgnoreOn = contract.Append(s.IgnoreOn, errs) }
}

// Name shares one limiter, and its limit, among every function wrapped with this name;
// the name is the instance id, also of a limiter built with New. Default none: each
// wrapped function has its own limiter, whose id is the function's id (a limiter built
// with New has no id, "").
func Name(name string) Option { return contract.Name[settings](name) }

// UseConfig applies the configuration keys configs.<name>.adaptiveLimit.*, which take
// precedence over the options in code. Default none. A name with no such keys fails with
// R4C-REG-004 when the function is wrapped.
func UseConfig(name string) Option { return contract.UseConfig[settings](name) }

// WithClock sets the time source, which measures latencies and times MaxWait. Default
// clock.System(). A registry sets its own.
func WithClock(c clock.Clock) Option { return contract.WithClock[settings](c) }

// OnEvent sets the listener of the limiter's events: EventChanged (attributes "limit" and
// "previous_limit"), EventRejected for every rejection of a call that came with a live
// context (Wait = how long it waited before), and EventWaited for a call let in after
// waiting (Wait = how long). Calls let in without waiting publish nothing. Default none:
// nothing is published. A registry adds its own listeners. EventChanged events reach the
// listener in the order of the changes, while the limiter holds the lock of its
// algorithm: a listener may read Snapshot, but must not make calls through the limiter.
// Each event reaches a recorder with the context of the call it concerns: for
// EventChanged, the call whose sample changed the limit (context.Background() when that
// sample came through Permit.Record).
func OnEvent(l policy.Listener) Option { return contract.OnEvent[settings](l) }
