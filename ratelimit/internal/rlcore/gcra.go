package rlcore

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/ratelimit/internal/gcra"
)

// MaxInt64 is the largest int64: a saturated TAT, which refuses every call.
const MaxInt64 = 1<<63 - 1

// GCRA is GCRA on one TAT, for emission interval T and burst tolerance
// tau = (Permits-1)·T. At clock time now the next permit is free after
// wait = max(TAT, now) - now - tau (≤ 0: free now). A call that would wait longer than
// maxWait is refused without changing anything; otherwise the TAT moves forward by T.
// It returns the TAT before and after, and the wait (clamped at 0 when reserved).
//
// A TAT past the largest time.Duration (a period or maxWait of about 292 years from the
// clock's origin) cannot be represented: the call that would move the TAT past it is
// admitted (its own permit time is exact) and leaves the TAT at the largest value, which
// then refuses every call, with that largest value as the retry-after, until the
// cancellation of that call. So no permit is ever given twice .
//
// The dead TAT of an evicted key (DeadTAT) refuses too, with prev = DeadTAT: the
// caller looks the key up again.
func GCRA(tat *atomic.Int64, interval, tau, now, maxWait int64) (prev, next, wait int64, ok bool) {
	for spins := 0; ; spins++ {
		prev = tat.Load()
		// prev is MaxInt64 or DeadTAT (minInt64) — one unsigned comparison, as the two
		// are adjacent as uint64: the hot path costs what a check of MaxInt64 alone did.
		if uint64(prev)-MaxInt64 <= 1 {
			return prev, prev, MaxInt64, false
		}
		base := max(prev, now)
		wait = base - now - tau // base-now ∈ [0, MaxInt64], tau ≥ 0: no overflow
		if wait > maxWait {
			return prev, prev, wait, false
		}
		next = sat.Add(base, interval)
		if tat.CompareAndSwap(prev, next) {
			return prev, next, max(wait, 0), true
		}
		// Lost the race to another call : retry at once, yielding the processor
		// now and then so that the winner's core can make progress. A call admitted on a
		// retry counts at the clock reading it started with; that reading is at most the
		// time of the CAS, so a call is never admitted earlier than GCRA allows.
		if spins&3 == 3 {
			runtime.Gosched()
		}
	}
}

// AfterDeadline reports whether a refusal whose retry-after is wait is the deadline's: the
// call could wait only until its deadline (byDeadline, with limit the time left, from
// WaitLimit) and its permit comes after that, within maxWait. Such a refusal matches
// context.DeadlineExceeded; one with a sooner retry-after (a backend's store that
// fails closed, say) does not.
func AfterDeadline(wait, limit int64, byDeadline bool, maxWait int64) bool {
	return byDeadline && wait > limit && wait <= maxWait
}

// WaitLimit is how long a call with ctx may wait for its permit: maxWait, or less when
// ctx's deadline comes first (byDeadline). The time left is read on the real clock
// (time.Until, which saturates), and never below 0.
func WaitLimit(ctx context.Context, maxWait int64) (limit int64, byDeadline bool) {
	limit = maxWait
	if limit > 0 {
		if deadline, has := ctx.Deadline(); has {
			if left := max(int64(time.Until(deadline)), 0); left < limit {
				return left, true
			}
		}
	}
	return limit, false
}

// AvailableAt is how many calls would pass at now without waiting, for a TAT tat.
func AvailableAt(tat, interval, tau, now int64, permits int) int {
	return gcra.Available(sat.Sub(tat, now), interval, tau, permits)
}
