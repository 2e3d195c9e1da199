package rlcore

import (
	"strconv"
	"strings"
	"time"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy/observe"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
)

// Settings is what the options of package ratelimit produce, for a Limiter and for a keyed
// limiter: the configuration, how the instance is named, timed and observed, and where its
// state lives.
type Settings struct {
	Config Config
	contract.Common
	// Given says which of Permits and Period were set, and how.
	Given Given
	// Backend keeps the state outside the process (ratelimit.WithBackend); nil keeps it
	// in-process. It is not part of Config: two limiters that share a name compare their
	// Config only.
	Backend backend.Backend
	// MaxKeys bounds how many keys a keyed limiter holds at once; 0 means its default.
	MaxKeys int
	// MaxKeyBytes bounds the length of the string keys a keyed limiter keeps as they are;
	// 0 means its default.
	MaxKeyBytes int
	// KeyedObserver makes the recorder of a keyed limiter's outcomes; nil records nothing.
	// A Limiter's observers are a registry's (contract.Common.Observer).
	KeyedObserver observe.Observer
	// PerKey is a keyed limiter's function of the key giving its limit as text
	// (keyed.PerKey): a func(K) string for the limiter's key type K; nil: every key on
	// Config.
	PerKey any
}

// Given records which of Permits and Period an option or a configuration key set, and the
// text a configuration key gave them, so that validation tells a value that is wrong (an
// explicit 0) from one that was never set.
type Given struct {
	Permits, Period         bool
	PermitsText, PeriodText string // the configuration's text; "" when set in code
}

// All is Given for a configuration whose every field is given: a 0 is a wrong value, not
// one never set.
var All = Given{Permits: true, Period: true}

// Validate checks c and returns a *policy.ConfigError: R4C-ATR-003 if Permits < 1,
// R4C-ATR-002 if Period ≤ 0, R4C-REG-001 if Period is shorter than Permits × 1ns,
// R4C-ATR-004 if MaxWait < 0, and Windows as ParseWindows does. g says which fields were set: a 0 in a field never set is
// reported as not set.
func Validate(c Config, g Given) error {
	// A value out of its own range first, then a value not set, then the relation of
	// period and permits: so that a configuration that sets some attributes and leaves the
	// others to code (defaults.rateLimiter.*) has its own values checked.
	switch {
	case c.Permits < 0 || c.Permits == 0 && g.Permits:
		return r4c.Errorf(r4c.BadPermits, "rateLimiter.permits", textOr(g.PermitsText, strconv.Itoa(c.Permits)),
			"permits must be at least 1 (set ratelimit.Permits or rateLimiter.permits)")
	case c.Period < 0 || c.Period == 0 && g.Period:
		reason := "period must be positive"
		if c.Period == 0 && strings.ContainsAny(g.PeriodText, "123456789") {
			reason += ", and this one is shorter than the 1ns unit of durations: it rounds to 0"
		}
		return r4c.Errorf(r4c.ZeroPeriod, "rateLimiter.period", textOr(g.PeriodText, c.Period.String()),
			"%s (set ratelimit.Period or rateLimiter.period)", reason)
	case c.MaxWait < 0:
		return r4c.Errorf(r4c.NegativeDuration, "rateLimiter.maxWait", c.MaxWait.String(),
			"maxWait must not be negative")
	case c.Permits == 0:
		return r4c.Errorf(r4c.BadPermits, "rateLimiter.permits", "",
			"permits is not set: set ratelimit.Permits or rateLimiter.permits (at least 1)")
	case c.Period == 0:
		return r4c.Errorf(r4c.ZeroPeriod, "rateLimiter.period", "",
			"period is not set: set ratelimit.Period or rateLimiter.period (positive)")
	case c.Period < time.Duration(c.Permits):
		return r4c.Errorf(r4c.PeriodTooShort, "rateLimiter.period", c.Period.String(),
			"period must be at least 1ns per permit: %d permits need a period of at least %v",
			c.Permits, time.Duration(c.Permits))
	}
	var w [MaxMore]Window
	_, err := ParseWindows(c.Windows, &w)
	return err
}

// textOr returns s, or alt when s is empty.
func textOr(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// Changed names, sorted, the settings that differ between a and b, by their configuration
// attribute names.
func Changed(a, b Config) []string {
	var c contract.Changes
	c.Add(a.Disabled != b.Disabled, "enabled")
	c.Add(a.MaxWait != b.MaxWait, "maxWait")
	c.Add(a.Period != b.Period, "period")
	c.Add(a.Permits != b.Permits, "permits")
	c.Add(a.Shadow != b.Shadow, "shadow")
	c.Add(a.Windows != b.Windows, "windows")
	return c.Sorted()
}
