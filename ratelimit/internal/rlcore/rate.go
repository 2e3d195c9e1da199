package rlcore

import (
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/ratelimit/internal/gcra"
)

// Config is a limiter's configuration: ratelimit.Config's fields, which convert to and
// from it.
type Config struct {
	Permits  int
	Period   time.Duration
	MaxWait  time.Duration
	Disabled bool
}

// Rate is a limiter's configuration in force, with what its calls derive from it. It is
// immutable: a change of configuration replaces it whole, so that a call, which loads it
// once, never sees half of one configuration and half of another.
type Rate struct {
	Cfg      Config
	Interval int64 // T, the emission interval in ns
	Tau      int64 // (Permits-1)·T: how far the TAT may run ahead of now with a permit free now
	MaxWait  int64
	Burst    error                // the refusal of a call for more than Permits permits
	shared   atomic.Pointer[Rate] // LocalShare's rate, made at its first use
}

// Init makes r the rate of c, valid, whose calls for more than Permits are refused with
// burst.
func (r *Rate) Init(c Config, burst error) {
	t := int64(gcra.Interval(c.Permits, c.Period))
	r.Cfg, r.Interval, r.Tau, r.MaxWait, r.Burst = c, t, sat.Mul(int64(c.Permits-1), t), int64(c.MaxWait), burst
}

// LocalShare returns the rate at which a limiter with a backend decides in-process when
// its store answers Local: r itself for share ≤ 1, else 1/share of r (see
// backend.Backend.LocalShare): one permit every share·T, with a burst of Permits/share,
// at least 1.
func (r *Rate) LocalShare(share int) *Rate {
	if share <= 1 {
		return r
	}
	if p := r.shared.Load(); p != nil {
		return p
	}
	b := max(r.Cfg.Permits/share, 1)
	t := sat.Mul(int64(share), r.Interval)
	c := r.Cfg
	c.Permits, c.Period = b, time.Duration(sat.Mul(int64(b), t))
	p := &Rate{Cfg: c, Interval: t, Tau: sat.Mul(int64(b-1), t), MaxWait: r.MaxWait, Burst: r.Burst}
	r.shared.CompareAndSwap(nil, p)
	return r.shared.Load()
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
// for n < 1, the rate's Burst for more than Permits.
func (r *Rate) Check(n int) error {
	switch {
	case n < 1:
		return ErrBadCount
	case n > r.Cfg.Permits:
		return r.Burst
	}
	return nil
}

// ErrBadCount is the error of a call for fewer than 1 permit (R4C-ATR-003).
var ErrBadCount = r4c.Errorf(r4c.BadPermits, "n", "",
	"a call must take at least 1 permit")
