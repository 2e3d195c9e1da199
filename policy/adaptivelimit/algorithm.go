package adaptivelimit

import (
	"math"
	"time"

	"github.com/resilience4go/resilience4go/policy/internal/decimal"
)

// A round is what the samples of one round add up to.
type round struct {
	n           int     // samples
	drops       int     // samples that were drops
	sum         float64 // their latencies added up, in nanoseconds
	maxInFlight int     // the most calls in flight when one of them started
}

func (r *round) add(latency time.Duration, inFlight int, drop bool) {
	r.n++
	r.sum += float64(latency)
	r.maxInFlight = max(r.maxInFlight, inFlight)
	if drop {
		r.drops++
	}
}

// mean returns the average latency, in nanoseconds.
func (r *round) mean() float64 { return r.sum / float64(r.n) }

// appLimited reports whether the calls of the round used less than half of limit: the
// caller, not the dependency, held them back, so the round says nothing of whether the
// limit could be higher.
func (r *round) appLimited(limit float64) bool { return float64(2*r.maxInFlight) < limit }

// An algorithm moves the limit once per round. It is used under the limiter's lock.
type algorithm interface {
	// next returns the limit after round r (not empty), from the limit before it; the
	// limiter keeps the result within [MinLimit, MaxLimit].
	next(limit float64, r *round) float64
	// baseline returns the latency the algorithm compares the rounds with; 0 if none.
	baseline() time.Duration
}

func newAlgorithm(c Config) algorithm {
	base := newWindowedMin(c.BaselineWindow)
	switch c.Algorithm {
	case AIMD:
		return newAIMD(c.BackoffRatio)
	case Gradient2:
		return &gradient2{tolerance: c.Tolerance, smoothing: c.Smoothing, base: base}
	}
	return &vegas{base: base}
}

// windowedMin is the smallest of the rounds' average latencies over the last rounds: the
// latency of calls that do not queue, which the latency-based algorithms compare each
// round with. The rounds are kept in two buckets of n rounds: the minimum spans the last
// n to 2n rounds, so that it forgets a latency after at most 2n rounds and follows a
// dependency that became slower for good.
type windowedMin struct {
	n         int
	cur, prev float64 // the bucket minima, in nanoseconds; -1 for none
	rounds    int     // rounds in cur
	min       float64 // the minimum after the last round
}

func newWindowedMin(n int) windowedMin { return windowedMin{n: n, cur: -1, prev: -1} }

// add adds a round's average latency x and returns the minimum.
func (w *windowedMin) add(x float64) float64 {
	if w.cur < 0 || x < w.cur {
		w.cur = x
	}
	w.min = w.cur
	if w.prev >= 0 && w.prev < w.min {
		w.min = w.prev
	}
	if w.rounds++; w.rounds == w.n {
		w.prev, w.cur, w.rounds = w.cur, -1, 0
	}
	return w.min
}

// aimd is additive increase, multiplicative decrease, as TCP's congestion avoidance: one
// more call per round without a drop, BackoffRatio times the limit after a round with
// one. (Slow calls are made drops by the limiter, which knows LatencyThreshold.) The
// product's whole part is exact, BackoffRatio being the decimal written: 100 × 0.57 is
// 57, where float64 gives 56.99999999999999 and the limit would fall to 56.
type aimd struct{ backoff decimal.Decimal }

func newAIMD(backoff float64) *aimd {
	d, _ := decimal.Of(backoff)
	return &aimd{backoff: d}
}

func (a *aimd) next(limit float64, r *round) float64 {
	switch {
	case r.drops > 0:
		return a.backoff.MulFloat(limit)
	case r.appLimited(limit):
		return limit
	}
	return limit + 1
}

func (a *aimd) baseline() time.Duration { return 0 }

// gradient2 moves the limit by the gradient, the ratio of the baseline latency (with
// Tolerance of slack) to the round's average latency, kept within [0.5, 1], and adds a
// headroom of √limit for calls that queue; the result is smoothed:
//
//	limit ← limit·(1−Smoothing) + (limit·gradient + √limit)·Smoothing
type gradient2 struct {
	tolerance, smoothing float64
	base                 windowedMin
}

func (g *gradient2) next(limit float64, r *round) float64 {
	short := r.mean()
	long := g.base.add(short)
	if r.appLimited(limit) {
		return limit
	}
	gradient := 1.0
	if short > 0 {
		gradient = max(0.5, min(1, g.tolerance*long/short))
	}
	// The conversions keep products from being fused into the sums (FMA on some
	// platforms), so that the limit moves alike everywhere.
	estimate := float64(limit*gradient) + math.Sqrt(limit)
	return float64(limit*(1-g.smoothing)) + float64(estimate*g.smoothing)
}

func (g *gradient2) baseline() time.Duration { return time.Duration(g.base.min) }

// vegas keeps the queue at the dependency small, as TCP Vegas does. The queue is
// estimated as limit·(1 − baseline/latency), latency being the round's average. With
// lg = max(1, log10(limit)): a queue of at most lg adds 6·lg to the limit (nothing
// queues: grow fast), one below 3·lg adds lg, one above 6·lg takes lg away, and a round
// with a drop takes lg away.
type vegas struct{ base windowedMin }

func (v *vegas) next(limit float64, r *round) float64 {
	latency := r.mean()
	base := v.base.add(latency)
	if r.drops == 0 && r.appLimited(limit) {
		return limit
	}
	lg := max(1, math.Log10(limit))
	if r.drops > 0 {
		return limit - lg
	}
	queue := 0.0
	if latency > base {
		queue = limit * (1 - base/latency)
	}
	switch {
	case queue <= lg:
		return limit + float64(6*lg) // not fused: see gradient2.next
	case queue < 3*lg:
		return limit + lg
	case queue > 6*lg:
		return limit - lg
	}
	return limit
}

func (v *vegas) baseline() time.Duration { return time.Duration(v.base.min) }
