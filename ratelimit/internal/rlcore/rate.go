package rlcore

import (
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/internal/gcra"
)

// Config is a limiter's configuration: ratelimit.Config's fields, which convert to and
// from it.
type Config struct {
	Permits  int
	Period   time.Duration
	MaxWait  time.Duration
	Disabled bool
	// Windows are further windows, "permits/period" separated by commas (ParseWindows):
	// a call passes only if every window has room. "" for none.
	Windows string
	// Shadow lets through the calls the limiter would refuse, taking nothing for them.
	Shadow bool
}

// Rate is a limiter's configuration in force, with what its calls derive from it. It is
// immutable: a change of configuration replaces it whole, so that a call, which loads it
// once, never sees half of one configuration and half of another.
type Rate struct {
	Cfg      Config
	Interval int64 // T, the emission interval in ns
	Tau      int64 // (Permits-1)·T: how far the TAT may run ahead of now with a permit free now
	MaxWait  int64
	Burst    error                // the refusal of a call for more than Limit permits
	shared   atomic.Pointer[Rate] // LocalShare's rate, made at its first use with a share, again when the share changes
	of       int                  // for a rate made by LocalShare, the share it is of; 0 otherwise
	// Limit is the most permits one call may take: the smallest Permits of all windows.
	Limit int
	// More are the further windows (Cfg.Windows), NMore of them.
	NMore int
	More  [MaxMore]Window
	// Wins are the further windows as a backend's Request carries them (nil for none):
	// made once with the rate, so that a call allocates nothing for them.
	Wins []backend.Window
}

// Init makes r the rate of c, valid, whose calls for more than Limit permits (the
// smallest Permits of its windows) are refused with burst(Limit).
func (r *Rate) Init(c Config, burst func(limit int) error) {
	t := int64(gcra.Interval(c.Permits, c.Period))
	r.Cfg, r.Interval, r.Tau, r.MaxWait = c, t, sat.Mul(int64(c.Permits-1), t), int64(c.MaxWait)
	r.NMore, _ = ParseWindows(c.Windows, &r.More) // valid: no error
	r.Limit = c.Permits
	for i := range r.NMore {
		r.Limit = min(r.Limit, r.More[i].Permits)
		r.Wins = append(r.Wins, backend.Window{Permits: r.More[i].Permits, Period: r.More[i].Period})
	}
	r.Burst = burst(r.Limit)
}

// LocalShare returns the rate at which a limiter with a backend decides in-process when
// its store answers Local: r itself for share ≤ 1, else 1/share of r (see
// backend.Backend.LocalShare): one permit every share·T, with a burst of Permits/share,
// at least 1; and so for each further window. The rate of the last share asked for is
// kept: asking for it again allocates nothing, asking for another makes (and keeps) that
// one. Safe for concurrent use.
func (r *Rate) LocalShare(share int) *Rate {
	if share <= 1 {
		return r
	}
	if p := r.shared.Load(); p != nil && p.of == share {
		return p
	}
	b := max(r.Cfg.Permits/share, 1)
	t := sat.Mul(int64(share), r.Interval)
	c := r.Cfg
	c.Permits, c.Period = b, time.Duration(sat.Mul(int64(b), t))
	p := &Rate{Cfg: c, Interval: t, Tau: sat.Mul(int64(b-1), t), MaxWait: r.MaxWait, Burst: r.Burst, Limit: b, NMore: r.NMore, of: share}
	for i := range r.NMore {
		w := &r.More[i]
		wb := max(w.Permits/share, 1)
		wt := sat.Mul(int64(share), w.Interval)
		p.More[i] = Window{Permits: wb, Period: time.Duration(sat.Mul(int64(wb), wt)), Interval: wt, Tau: sat.Mul(int64(wb-1), wt)}
	}
	r.shared.Store(p)
	return p
}

// Weight returns, for a call for n permits (1..Permits), the stretch of the schedule it
// takes, inc = n·T, and its tolerance, tol = (Permits-n)·T: the call waits
// max(TAT, now) - now - tol.
func (r *Rate) Weight(n int) (inc, tol int64) {
	if n == 1 {
		return r.Interval, r.Tau
	}
	if n > r.Cfg.Permits {
		// A local share's call for more than its burst: it passes on a full bucket, and the
		// bucket owes the rest (tolerance 0: never negative, so no wait can overflow).
		return sat.Mul(int64(n), r.Interval), 0
	}
	return sat.Mul(int64(n), r.Interval), sat.Mul(int64(r.Cfg.Permits-n), r.Interval)
}

// Check returns the error of a call for n permits that can never be granted: ErrBadCount
// for n < 1, the rate's Burst for more than Limit.
func (r *Rate) Check(n int) error {
	switch {
	case n < 1:
		return ErrBadCount
	case n > r.Limit:
		return r.Burst
	}
	return nil
}

// ErrBadCount is the error of a call for fewer than 1 permit (R4C-ATR-003).
var ErrBadCount = r4c.Errorf(r4c.BadPermits, "n", "",
	"a call must take at least 1 permit")
