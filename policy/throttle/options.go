package throttle

import (
	"math/rand/v2"
	"reflect"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// Layer is the throttle's layer, and the segment of its configuration keys ("throttle" in
// defaults.throttle.…).
//
// In the default order the throttle sits inside the retry or hedge and outside the
// circuit breaker: each attempt of a retry or a hedge is a request it counts, as the
// backend sees it; a call it rejects reaches neither the breaker, which therefore never
// counts the throttle's rejections as failures, nor the rate limiter, the timeout, the
// bulkhead or the adaptive limit, so it spends no permit and takes no slot. The
// rejections of those inner layers, the breaker's included, reach the throttle as errors
// like any other: list them in IgnoreOn (circuitbreaker.ErrOpen, ratelimit.ErrExceeded,
// bulkhead.ErrFull, ...) so that a call your own layers refused counts neither as a
// request nor as an accept.
const Layer policy.Layer = "throttle"

// Config is a throttle's configuration in force, as Throttle.Config returns it: set with
// the options or the configuration keys throttle.*. Two identical option sets give
// configurations equal under reflect.DeepEqual.
//
// A registry's reload changes a running throttle: K and MaxRejection from the next call;
// Window at once, with a new, empty window (the counts of the old one, cut in buckets of
// another width, are dropped: the throttle admits every call until it has counted
// refusals again); Enabled at once. An invalid configuration is refused with the error
// New would return and changes nothing. A change publishes a ConfigChanged event naming
// the attributes that changed; a configuration equal to the one in force publishes
// nothing. A call classifies its outcome by the configuration in force when it was
// admitted.
type Config struct {
	// K is the multiplier of the accepts: over the window, a call is rejected with the
	// probability max(0, (requests − K·accepts) / (requests + 1)), at most MaxRejection,
	// so that the calls sent settle at about K times the calls the backend accepts. A
	// lower K throttles harder and sooner; 1 sends no more than the backend accepts. At
	// least 1 and finite. Default 2, the SRE book's.
	K float64
	// Window is the span of the sliding window the requests and accepts are counted
	// over, on the throttle's clock, in 20 buckets of Window/20: a call counts for more
	// than 19/20 of it and at most all of it. Throttling stops at the latest one window
	// after the backend accepts every call again, when the rejection probability was at
	// most 1 − 1/K then (½ for K 2): the calls sent from then on are all accepted, and
	// are at least 1/K of the requests. Positive. Default 1m.
	Window time.Duration
	// MaxRejection caps the rejection probability: at least 1 − MaxRejection of the
	// calls reach the backend, however few it accepts, so that the throttle sees it
	// recover. In (0, 1]. Default 0.9. With 1 the formula alone decides: it never quite
	// reaches 1, but a backend that refused every call of the window then gets about one
	// call per window.
	MaxRejection float64
	// RefusedOn, when not empty, lists the only errors (matched with errors.Is) that count
	// as the backend's refusal of a call; other errors count as accepts. Set in code
	// only; no configuration attribute. Default empty: every error is a refusal.
	RefusedOn []error
	// IgnoreOn lists errors (matched with errors.Is) with which a call counts neither as
	// a request nor as an accept: the call never reached the backend, or its caller gave
	// up. It wins over RefusedOn and RefusedIf. Set in code only; no configuration
	// attribute. Default empty.
	IgnoreOn []error
	// Disabled true lets every call through uncounted. Default false: the zero value is
	// enabled. The configuration key is throttle.enabled (its negation). A reload
	// changes it at once.
	Disabled bool
}

// defaultConfig returns the built-in defaults: K 2, Window 1m, MaxRejection 0.9, no error
// lists, enabled.
func defaultConfig() Config { return Config{K: 2, Window: time.Minute, MaxRejection: 0.9} }

// validate checks the configuration and returns a *policy.ConfigError: R4C-ATR-007 if K
// is below 1 or infinite (or NaN), if MaxRejection is outside (0, 1] or if Window is 0;
// R4C-ATR-004 if Window is negative.
func (c Config) validate() error {
	return r4c.First(
		r4c.FiniteAtLeast("throttle.k", c.K, 1, ""),
		r4c.Positive("throttle.window", c.Window, ""),
		maxRejectionErr(c.MaxRejection),
	)
}

// maxRejectionErr returns nil when p is in (0, 1] (NaN is not), else an R4C-ATR-007
// error.
func maxRejectionErr(p float64) error {
	if p > 0 && p <= 1 {
		return nil
	}
	return r4c.Errorf(r4c.OutOfRange, "throttle.maxRejection", r4c.FormatFloat(p),
		"maxRejection must be a probability above 0 and at most 1")
}

// settings is what options produce: the configuration and how the instance is named,
// timed and observed.
type settings struct {
	Config
	contract.Common
	refusedIf *contract.Predicate // RefusedIf's predicate; nil: none. Not in Config, so
	// that a reload keeps it.
	rand rand.Source // the random source of the rejections; nil: math/rand/v2's
}

func defaults() settings { return settings{Config: defaultConfig()} }

// attrs are the configuration attributes, which also name what a reload changes.
var attrs = []contract.Attr[settings]{
	contract.FloatAttr("k", func(s *settings) *float64 { return &s.K }),
	contract.DurationAttr("window", func(s *settings) *time.Duration { return &s.Window }),
	contract.FloatAttr("maxRejection", func(s *settings) *float64 { return &s.MaxRejection }),
	contract.EnabledAttr(func(s *settings) *bool { return &s.Disabled }),
}

// descriptor is how a registry sees throttles.
var descriptor = contract.Conventional(&contract.Descriptor[settings]{
	L:        Layer,
	Attrs:    attrs,
	Defaults: defaults,
	Config:   func(s *settings) any { return contract.Shared[Config]{Config: s.Config, If: s.refusedIf} },
	State:    contract.Typed((*Throttle).Snapshot),
	Result:   func(s *settings) reflect.Type { return s.refusedIf.ResultType() },
	Metrics:  metrics,

	Compose: contract.Composition{Rank: 35, Live: contract.Live((*Throttle).checkReconfigure, (*Throttle).reconfigure)},
	CodeAttrs: []contract.Param{
		{Name: "refusedOn", Option: "RefusedOn", Value: contract.ErrorsValue},
		{Name: "ignoreOn", Option: "IgnoreOn", Value: contract.ErrorsValue},
	},
}, build, (*settings).validate,
	func(t *Throttle) string { return t.events.ID },
	func(t *Throttle) contract.Shared[Config] {
		return contract.Shared[Config]{Config: t.Config(), If: t.refusedIf}
	})

func init() { contract.Register(descriptor) }

// Option configures a throttle.
type Option func(*settings)

// Enabled false lets every call through uncounted. Default true.
func Enabled(on bool) Option { return func(s *settings) { s.Disabled = !on } }

// K sets the multiplier of the accepts: the calls sent settle at about k times the calls
// the backend accepts (see Config.K). Default 2. Below 1, infinite or NaN fails with
// R4C-ATR-007.
func K(k float64) Option { return func(s *settings) { s.K = k } }

// Window sets the span of the sliding window the requests and accepts are counted over,
// on the throttle's clock. Default 1m. Negative fails with R4C-ATR-004, 0 with
// R4C-ATR-007.
func Window(d time.Duration) Option { return func(s *settings) { s.Window = d } }

// MaxRejection caps the rejection probability at p. Default 0.9. Outside (0, 1] fails
// with R4C-ATR-007.
func MaxRejection(p float64) Option { return func(s *settings) { s.MaxRejection = p } }

// RefusedOn adds errors (matched with errors.Is) that count as the backend's refusal of
// a call: a server's overload answer (an HTTP 429 or 503 error, a remote rate limiter's
// or circuit breaker's rejection). Once any is set, every other error counts as an
// accept. Default empty: every error is a refusal. Nil errors are skipped; each call
// adds to the list.
func RefusedOn(errs ...error) Option {
	return func(s *settings) { s.RefusedOn = contract.Append(s.RefusedOn, errs) }
}

// IgnoreOn adds errors (matched with errors.Is) with which a call counts neither as a
// request nor as an accept: the rejections of your own inner layers, the caller's
// context.Canceled. Default empty. IgnoreOn wins over RefusedOn and RefusedIf. Nil errors
// are skipped; each call adds to the list.
func IgnoreOn(errs ...error) Option {
	return func(s *settings) { s.IgnoreOn = contract.Append(s.IgnoreOn, errs) }
}

// RefusedIf counts as refusals the outcomes for which pred returns true, in addition to
// the errors the lists count: e.g. a response with status 429 returned with a nil error.
// T must be the result type of the calls the throttle decorates; wrapping a function of
// another result type fails with R4C-REG-010. Default none. A later call replaces the
// predicate; a nil pred removes it. pred must be quick and safe for concurrent use; if it
// panics, the call counts as refused and the panic goes on.
func RefusedIf[T any](pred func(v T, err error) bool) Option {
	p := contract.NewPredicate(pred)
	return func(s *settings) { s.refusedIf = p }
}

// RandomSource sets the source of the random numbers that decide the rejections, for a
// deterministic test (e.g. rand.NewPCG(1, 2)); the throttle draws from it under its
// lock, so src need not be safe for concurrent use, but must not be used elsewhere.
// Default none: math/rand/v2's top-level functions, which take no lock and allocate
// nothing.
func RandomSource(src rand.Source) Option { return func(s *settings) { s.rand = src } }

// Name shares one throttle, and its window, among every function wrapped with this name;
// the name is the instance id, also of a throttle built with New. Default none: each
// wrapped function has its own throttle, whose id is the function's id ("" for one built
// with New).
func Name(name string) Option { return contract.Name[settings](name) }

// UseConfig applies the configuration keys configs.<name>.throttle.*, which take
// precedence over the options in code. Default none. A name with no such keys fails with
// R4C-REG-004 when the function is wrapped.
func UseConfig(name string) Option { return contract.UseConfig[settings](name) }

// WithClock sets the time source, which times the window. Default clock.System(). A
// registry sets its own.
func WithClock(c clock.Clock) Option { return contract.WithClock[settings](c) }

// OnEvent sets the listener of the throttle's events: EventRejected, and ConfigChanged
// when a reload changes its configuration. Default none: nothing is published. A
// registry adds its own listeners.
func OnEvent(l policy.Listener) Option { return contract.OnEvent[settings](l) }
