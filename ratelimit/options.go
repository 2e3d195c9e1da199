package ratelimit

import (
	"strings"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// Layer is the rate limiter's layer, after the circuit breaker in the default order, and
// the segment of its configuration keys ("rateLimiter" in defaults.rateLimiter.…).
const Layer policy.Layer = "rateLimiter"

// Config is a limiter's configuration, as Limiter.Config returns it: what its options (or
// a registry's configuration keys) resolved to, validated when the limiter was built, or
// what Reconfigure last applied. The options are the way to set it; a Config literal is
// what Reconfigure takes, every field given.
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
	// Windows are further quotas the limiter keeps besides Permits per Period, as text:
	// "permits/period" pairs separated by commas, e.g. "1000/24h" or "100/1m, 1000/24h"
	// (see the Windows option). A call passes only if every window has room for it, takes
	// from all of them or from none, and a refusal's retry-after is the longest wait among
	// them. At most 3 windows; each pair is checked as Permits and Period are. Default
	// "", none.
	Windows string
	// Shadow true lets every call through and still decides each as usual: a call the
	// limiter would refuse takes nothing, runs at once, and is counted and published as a
	// rejection in shadow (see the Shadow option). Default false. The configuration key is
	// rateLimiter.shadow.
	Shadow bool
}

// settings is what options produce: the configuration, how the instance is named, timed
// and observed, and where its state lives (shared with package keyed, whose options are
// this package's).
type settings = rlcore.Settings

func defaults() settings { return settings{} }

// descriptor is how a registry sees rate limiters.
var descriptor = &contract.Descriptor[settings]{
	L: Layer,
	Attrs: []contract.Attr[settings]{
		noted(assume(contract.IntAttr("permits", func(s *settings) *int { return &s.Config.Permits }), "1"),
			func(s *settings, v string) { s.Given.Permits, s.Given.PermitsText = true, v }),
		noted(assume(contract.DurationAttr("period", func(s *settings) *time.Duration { return &s.Config.Period }), "1s"),
			func(s *settings, v string) { s.Given.Period, s.Given.PeriodText = true, v }),
		contract.DurationAttr("maxWait", func(s *settings) *time.Duration { return &s.Config.MaxWait }),
		windowsAttr,
		contract.EnabledAttr(func(s *settings) *bool { return &s.Config.Disabled }),
		contract.ShadowAttr(func(s *settings) *bool { return &s.Config.Shadow }),
	},
	Defaults: defaults,
	Validate: func(s *settings) error { return rlcore.Validate(s.Config, s.Given) },
	Common:   func(s *settings) *contract.Common { return &s.Common },
	Config:   func(s *settings) any { return Config(s.Config) },
	Build:    func(s settings) (contract.Instance, error) { return build(s) },
	Of:       func(p contract.Instance) any { return p.(*Limiter).Config() },
	State:    func(p contract.Instance) any { return p.(*Limiter).Snapshot() },
	Metrics:  metrics,

	Compose: contract.Composition{Rank: 50, Live: live, GivesPermits: true,
		Rejection: func(p contract.Instance) error { return p.(*Limiter).rej.Plain }},
	Pkg: "github.com/resilience4go/resilience4go/ratelimit", // settings are rlcore's, shared with package keyed
}

// live is the change of a running limiter to cfg, a Config, from a registry's reload.
func live(inst contract.Instance, cfg any) (contract.LiveChange, bool) {
	l, ok := inst.(*Limiter)
	c, held := cfg.(Config)
	if !ok || !held {
		return contract.LiveChange{}, false
	}
	return contract.LiveChange{
		Check: func() error { return rlcore.Validate(rlcore.Config(c), rlcore.All) },
		Apply: func() error { return l.Reconfigure(c) },
	}, true
}

func init() { contract.Register(descriptor) }

// assume returns a, an attribute without a default, with the value the code generator's
// range check assumes when a directive leaves it to the configuration.
func assume(a contract.Attr[settings], v string) contract.Attr[settings] {
	a.Assume = v
	return a
}

// noted returns attribute a that, once it has set a value, also calls note with the
// value's text, trimmed of spaces.
func noted(a contract.Attr[settings], note func(s *settings, text string)) contract.Attr[settings] {
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

// windowsAttr is the attribute windows: the list of further windows, as Config.Windows
// holds it, checked whole when it is set (rlcore.ParseWindows).
var windowsAttr = contract.Attr[settings]{Name: "windows", Value: contract.StringValue,
	Set: func(s *settings, v string) error {
		var w [rlcore.MaxMore]rlcore.Window
		if _, err := rlcore.ParseWindows(v, &w); err != nil {
			return err
		}
		s.Config.Windows = strings.TrimSpace(v)
		return nil
	}}

// Option configures a limiter.
type Option func(*settings)

// Enabled false lets every call through, changing no state. Default true.
func Enabled(on bool) Option { return func(s *settings) { s.Config.Disabled = !on } }

// Shadow true puts the limiter in shadow mode, a dark launch: it decides every call as
// usual and refuses none. A call it would refuse (no permit within MaxWait, a permit that
// would come after the call's deadline, more permits than the burst) takes nothing and
// runs at once; it publishes the EventRejected event it would have published, with the
// attribute "shadow" (true), is counted in Snapshot.ShadowRejected and in the metric
// resilience.rate_limiter.shadow_rejections, and is recorded as admitted (ResultAdmitted,
// Wait 0): it ran. A call that would wait for its permit reserves it as it would, and runs
// at once, without waiting and without an EventWaited event; a Reservation's Delay is 0.
// The limiter's state thus moves exactly as without shadow, and the calls counted are the
// ones it would have refused. A call whose context is nil or done on arrival is refused
// as without shadow mode (the rejection matches ErrExceeded and the context's error),
// and a count of permits below 1 is still an error.
// Default false. The configuration key is rateLimiter.shadow; a reload changes it live.
func Shadow(on bool) Option { return func(s *settings) { s.Config.Shadow = on } }

// Permits sets how many calls pass per period, and the burst. Required: there is no
// default. Less than 1, 0 included, fails with R4C-ATR-003.
func Permits(n int) Option {
	return func(s *settings) { s.Config.Permits, s.Given.Permits, s.Given.PermitsText = n, true, "" }
}

// Period sets the quota window. Required: there is no default. Zero or negative fails
// with R4C-ATR-002; shorter than permits × 1ns with R4C-REG-001.
func Period(d time.Duration) Option {
	return func(s *settings) { s.Config.Period, s.Given.Period, s.Given.PeriodText = d, true, "" }
}

// Windows sets further quotas the limiter keeps together with Permits per Period, as a
// list of "permits/period" pairs separated by commas: Windows("1000/24h") with
// Permits(10) and Period(time.Second) passes 10 calls per second and 1,000 per day. A
// call passes only if every window has room, takes its permits from all of them or from
// none, and a refusal's retry-after is the longest of their waits. A call may take at most
// the smallest permits of all windows at once. Each pair is checked as Permits and Period
// are: R4C-ATR-003 for permits < 1, R4C-ATR-002 for a period ≤ 0, R4C-REG-001 for one
// shorter than permits × 1ns; R4C-ATR-005 for a pair that is not permits/period, and
// R4C-ATR-007 for more than 3 windows. A keyed limiter keeps the windows for each key,
// if it is built with them (its Reconfigure cannot add them later: R4C-REG-010, unless it
// has a backend). A limiter with a backend sends the windows to its store with each call
// (backend.Request.Windows): the Redis store keeps each window's TAT in a key of its own
// and decides them all in one script run. The configuration key is rateLimiter.windows.
// Default none.
func Windows(list string) Option {
	return func(s *settings) { s.Config.Windows = strings.TrimSpace(list) }
}

// MaxWait sets how long a call may wait for its permit. Default 0: reject at once.
// Negative fails with R4C-ATR-004. To wait as long as the caller's context allows, set
// the largest duration, MaxWait(math.MaxInt64): a call then waits for its turn unless
// its context's deadline comes first, and is refused at once, reserving nothing, when it
// does.
func MaxWait(d time.Duration) Option { return func(s *settings) { s.Config.MaxWait = d } }

// Name is the limiter's instance id, which its events, errors and snapshots carry, and
// which a backend keys its state by. In a registry, it shares one limiter, and its quota,
// among every function wrapped with this name. Default none: a registry gives each wrapped
// function its own limiter, whose id is the function's id; a limiter built with New or
// keyed.New has no id: its rejection then reads `ratelimit: rate limit exceeded`
// (ErrExceeded's text), and only its refusal of a call for more than its burst
// (ErrExceedsBurst) speaks of "the rate limiter".
func Name(name string) Option { return contract.Name[settings](name) }

// UseConfig applies the configuration keys configs.<name>.rateLimiter.*, which take
// precedence over the options in code. Default none. A name with no such keys fails with
// R4C-REG-004 when the function is wrapped.
func UseConfig(name string) Option { return contract.UseConfig[settings](name) }

// WithClock sets the time source. Default clock.System(). A registry sets its own.
func WithClock(c clock.Clock) Option { return contract.WithClock[settings](c) }

// OnEvent sets the listener of the limiter's EventRejected and EventWaited events (and of
// its backend's stores' events). Default none: nothing is published. A registry adds its
// own listeners, and its observers (resilience.WithObserver) record each call's outcome.
func OnEvent(l policy.Listener) Option { return contract.OnEvent[settings](l) }
