package ratelimit

import (
	"strconv"
	"strings"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/kind"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
)

// Layer is the rate limiter's layer, after the circuit breaker in the default order, and the segment of its configuration keys
// ("rateLimiter" in defaults.rateLimiter.…).
const Layer policy.Layer = "rateLimiter"

// Config is a limiter's resolved configuration, validated once when the limiter is built.
type Config struct {
	// Permits is how many calls pass per Period, and the burst size: after a quiet spell
	// of a period, Permits calls pass at once. At least 1, and at most 1,000,000,000 per
	// second of Period. No default: it must be set.
	Permits int
	// Period is the length of the quota window. Positive, and at least Permits × 1ns. No
	// default: it must be set.
	Period time.Duration
	// MaxWait is how long a call may wait for its permit; a call whose permit comes later
	// is rejected at once, without waiting. At least 0. Default 0: reject at once.
	MaxWait time.Duration
	// Disabled true lets every call pass and changes no state. Default false: the zero
	// value is enabled. The configuration key is rateLimiter.enabled.
	Disabled bool
}

// DefaultConfig returns the built-in defaults: MaxWait 0, enabled, and Permits and Period
// unset, so that a limiter without them fails validation.
func DefaultConfig() Config { return Config{} }

// EmissionInterval returns T = Period / Permits, the spacing of permits after a burst,
// rounded up to a whole nanosecond so that no window sees more calls than the quota
// allows. It is 0 for an invalid configuration.
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

// Validate checks the configuration and returns a *policy.ConfigError:
// R4C-ATR-003 if Permits < 1, R4C-ATR-002 if Period <= 0, R4C-REG-001 if Period is
// shorter than Permits × 1ns, R4C-ATR-004 if MaxWait < 0. A Permits or Period of 0 is
// reported as not set: in a Config, 0 is the value of a field never set.
func (c Config) Validate() error { return c.validate(given{}) }

// given records which of Permits and Period an option or a configuration key set, and the
// text a configuration key gave them, so that validation tells a value that is wrong (an
// explicit 0) from one that was never set.
type given struct {
	permits, period         bool
	permitsText, periodText string // the configuration's text; "" when set in code
}

// validate is Validate, knowing which fields were set.
func (c Config) validate(g given) error {
	// A value out of its own range first, then a value not set, then the relation of
	// period and permits: so that a configuration that sets some attributes and leaves the
	// others to code (defaults.rateLimiter.*) has its own values checked.
	switch {
	case c.Permits < 0 || c.Permits == 0 && g.permits:
		return policy.Errorf(policy.CodeBadPermits, "rateLimiter.permits", textOr(g.permitsText, strconv.Itoa(c.Permits)),
			"permits must be at least 1 (set ratelimit.Permits or rateLimiter.permits)")
	case c.Period < 0 || c.Period == 0 && g.period:
		reason := "period must be positive"
		if c.Period == 0 && strings.ContainsAny(g.periodText, "123456789") {
			reason += ", and this one is shorter than the 1ns unit of durations: it rounds to 0"
		}
		return policy.Errorf(policy.CodeZeroPeriod, "rateLimiter.period", textOr(g.periodText, c.Period.String()),
			"%s (set ratelimit.Period or rateLimiter.period)", reason)
	case c.MaxWait < 0:
		return policy.Errorf(policy.CodeNegativeDuration, "rateLimiter.maxWait", c.MaxWait.String(),
			"maxWait must not be negative")
	case c.Permits == 0:
		return policy.Errorf(policy.CodeBadPermits, "rateLimiter.permits", "",
			"permits is not set: set ratelimit.Permits or rateLimiter.permits (at least 1)")
	case c.Period == 0:
		return policy.Errorf(policy.CodeZeroPeriod, "rateLimiter.period", "",
			"period is not set: set ratelimit.Period or rateLimiter.period (positive)")
	case c.Period < time.Duration(c.Permits):
		return policy.Errorf(policy.CodePeriodTooShort, "rateLimiter.period", c.Period.String(),
			"period must be at least 1ns per permit: %d permits need a period of at least %v",
			c.Permits, time.Duration(c.Permits))
	}
	return nil
}

// textOr returns s, or alt when s is empty.
func textOr(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// settings is what options produce: the configuration, how the instance is named, timed
// and observed, and where its state lives.
type settings struct {
	Config
	kind.Common
	// given says which of Permits and Period were set, and how.
	given given
	// backend keeps the limiter's state outside the process (WithBackend); nil keeps it in
	// the Limiter. It is not part of Config: two limiters that share a name compare their
	// Config only.
	backend backend.Backend
	// maxKeys bounds how many keys a Keyed limiter holds at once; 0 means DefaultMaxKeys.
	maxKeys int
	// maxKeyBytes bounds the length of the string keys a Keyed limiter keeps as they are;
	// 0 means DefaultMaxKeyBytes.
	maxKeyBytes int
}

func defaults() settings { return settings{Config: DefaultConfig()} }

// descriptor is how a registry sees rate limiters.
var descriptor = &kind.Descriptor[settings]{
	L: Layer,
	Attrs: []kind.Attr[settings]{
		noted(assume(kind.IntAttr("permits", func(s *settings) *int { return &s.Permits }), "1"),
			func(s *settings, v string) { s.given.permits, s.given.permitsText = true, v }),
		noted(assume(kind.DurationAttr("period", func(s *settings) *time.Duration { return &s.Period }), "1s"),
			func(s *settings, v string) { s.given.period, s.given.periodText = true, v }),
		kind.DurationAttr("maxWait", func(s *settings) *time.Duration { return &s.MaxWait }),
		kind.EnabledAttr(func(s *settings) *bool { return &s.Disabled }),
	},
	Defaults: defaults,
	Validate: func(s *settings) error { return s.Config.validate(s.given) },
	Common:   func(s *settings) *kind.Common { return &s.Common },
	Config:   func(s *settings) any { return s.Config },
	Build:    func(s settings) (kind.Instance, error) { return build(s) },
	Of:       func(p kind.Instance) any { return p.(*Limiter).Config() },
	State:    func(p kind.Instance) any { return p.(*Limiter).Snapshot() },
	Metrics:  metrics,

	Compose: kind.Composition{Rank: 50, Live: kind.LiveValid[Config], GivesPermits: true},
}

func init() { kind.Register(descriptor) }

// assume returns a, an attribute without a default, with the value the code generator's
// range check assumes when a directive leaves it to the configuration.
func assume(a kind.Attr[settings], v string) kind.Attr[settings] {
	a.Assume = v
	return a
}

// noted returns attribute a that, once it has set a value, also calls note with the
// value's text, trimmed of spaces.
func noted(a kind.Attr[settings], note func(s *settings, text string)) kind.Attr[settings] {
	set := a.Set
	a.Set = func(s *settings, v string) error {
		if err := set(s, v); err != nil {
			return err
		}
		note(s, strings.TrimSpace(v))
		return nil
	}
	return a
}

// Option configures a limiter.
type Option func(*settings)

// WithConfig replaces the whole configuration with c, as resolved elsewhere (e.g. from
// the application's own settings); options after it change c further. Default
// DefaultConfig(). The zero Config is enabled; Permits and Period must be set in it: a 0
// in c is reported as not set. The limiter validates c when it is built.
func WithConfig(c Config) Option { return func(s *settings) { s.Config, s.given = c, given{} } }

// Enabled false lets every call through, changing no state. Default true.
func Enabled(on bool) Option { return func(s *settings) { s.Disabled = !on } }

// Permits sets how many calls pass per period, and the burst. Required: there is no
// default. Less than 1, 0 included, fails with R4C-ATR-003.
func Permits(n int) Option {
	return func(s *settings) { s.Permits, s.given.permits, s.given.permitsText = n, true, "" }
}

// Period sets the quota window. Required: there is no default. Zero or negative fails
// with R4C-ATR-002; shorter than permits × 1ns with R4C-REG-001.
func Period(d time.Duration) Option {
	return func(s *settings) { s.Period, s.given.period, s.given.periodText = d, true, "" }
}

// MaxWait sets how long a call may wait for its permit. Default 0: reject at once.
// Negative fails with R4C-ATR-004. To wait as long as the caller's context allows, set
// the largest duration, MaxWait(math.MaxInt64): a call then waits for its turn unless
// its context's deadline comes first, and is refused at once, reserving nothing, when it
// does.
func MaxWait(d time.Duration) Option { return func(s *settings) { s.MaxWait = d } }

// Name shares one limiter, and its quota, among every function wrapped with this name;
// the name is the instance id. Default none: each wrapped function has its own limiter,
// whose id is the function's id.
func Name(name string) Option { return kind.Name[settings](name) }

// UseConfig applies the configuration keys configs.<name>.rateLimiter.*, which take
// precedence over the options in code. Default none. A name with no such keys fails with
// R4C-REG-004 when the function is wrapped.
func UseConfig(name string) Option { return kind.UseConfig[settings](name) }

// WithClock sets the time source. Default clock.System(). A registry sets its own.
func WithClock(c clock.Clock) Option { return kind.WithClock[settings](c) }

// WithInstanceID sets the instance id of a limiter built with New. Default the Name, else
// "ratelimiter".
func WithInstanceID(id string) Option { return kind.WithInstanceID[settings](id) }

// OnEvent sets the listener of the limiter's EventRejected and EventWaited
// events (and of a backend's failure and recovery). Default none: nothing is published. A
// registry adds its own listeners.
func OnEvent(l policy.Listener) Option { return kind.OnEvent[settings](l) }

// Observe sets the observer asked for the instance's policy.Recorder, which is told each
// call's outcome (see policy.Outcome) and each event with the call's context. A
// registry's observer replaces it. Default none.
func Observe(o policy.Observer) Option { return kind.Observe[settings](o) }
