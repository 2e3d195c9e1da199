package rlcore

import (
	"strconv"
	"strings"
	"time"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit/internal/gcra"
)

// MaxMore is how many windows a limiter may have besides its Permits per Period: a
// reservation keeps the TAT of each, so their number is bounded.
const MaxMore = 3

// Window is one further (Permits, Period) pair of a limiter, with its emission interval T
// and burst tolerance (Permits-1)·T.
type Window struct {
	Permits  int
	Period   time.Duration
	Interval int64
	Tau      int64
}

// Weight is Rate.Weight for the window: inc = n·T and tol = (Permits-n)·T; for n >
// Permits (a local share's call for more than its burst) the tolerance is 0, as
// Rate.Weight's.
func (w *Window) Weight(n int) (inc, tol int64) {
	return sat.Mul(int64(n), w.Interval), sat.Mul(int64(max(w.Permits-n, 0)), w.Interval)
}

// ParseWindows reads a list of windows, "permits/period" separated by commas (spaces
// allowed around each, e.g. "1000/24h, 100/1m"), into dst, and returns how many it read.
// The empty list (or blanks) is no window. Errors are *policy.ConfigError keyed
// rateLimiter.windows: R4C-ATR-005 for a pair that is not "permits/period" with an
// integer and a duration, R4C-ATR-003 for permits < 1, R4C-ATR-002 for a period ≤ 0,
// R4C-REG-001 for a period shorter than permits × 1ns, R4C-ATR-007 for more than MaxMore
// windows.
func ParseWindows(s string, dst *[MaxMore]Window) (int, error) {
	const key = "rateLimiter.windows"
	if strings.TrimSpace(s) == "" {
		return 0, nil
	}
	n := 0
	for part := range strings.SplitSeq(s, ",") {
		p, d, found := strings.Cut(strings.TrimSpace(part), "/")
		permits, perr := strconv.Atoi(strings.TrimSpace(p))
		period, derr := policy.ParseDuration(d)
		switch {
		case !found || perr != nil || derr != nil:
			return 0, r4c.Errorf(r4c.BadNumber, key, s,
				"each window is permits/period, e.g. 1000/24h, and windows are separated by commas; %q is not", strings.TrimSpace(part))
		case permits < 1:
			return 0, r4c.Errorf(r4c.BadPermits, key, s, "a window's permits must be at least 1 (in %q)", strings.TrimSpace(part))
		case period <= 0:
			return 0, r4c.Errorf(r4c.ZeroPeriod, key, s, "a window's period must be positive (in %q)", strings.TrimSpace(part))
		case period < time.Duration(permits):
			return 0, r4c.Errorf(r4c.PeriodTooShort, key, s,
				"a window's period must be at least 1ns per permit (in %q)", strings.TrimSpace(part))
		case n == MaxMore:
			return 0, r4c.Errorf(r4c.OutOfRange, key, s,
				"at most %d windows besides permits per period", MaxMore)
		}
		t := int64(gcra.Interval(permits, period))
		dst[n] = Window{Permits: permits, Period: period, Interval: t, Tau: sat.Mul(int64(permits-1), t)}
		n++
	}
	return n, nil
}
