package rlcore

import (
	"math/bits"

	"github.com/resilience4go/resilience4go/internal/sat"
)

// A change of Permits or Period converts a schedule from the old rate to the new one
// : what the schedule owes, the part of [now, TAT) that granted permits still
// hold, is counted in permits of the old rate and owed again as that many permits of the
// new one, as a token bucket keeps its tokens when its rate changes. So a raised quota
// gives its next permit within one new T, and a lowered one owes its spent permits at its
// own, slower, rate.

// Convert applies a change from the rate old to nr at now to the schedule s. The fill,
// in permits, is what the old rate has free, Permits minus what the schedule owes, with
// fractions (the freed slots are not owed); or, when it is more, the whole permits free
// at now, freed slots included (reservations still waiting past a freed slot owe more
// than a burst, and the permits free at the change stay free). Capped at the new Permits,
// it sets the TAT at now + (new Permits - fill)·new T, and the freed slots go: the fill
// counts them. Called with the limiter's conversion lock held, so that no Cancel gives
// back a slot of the old schedule meanwhile; calls go on, each against the TAT before or
// after the move (a call that read the old rate and takes after the move is decided by
// the old rate on the new schedule).
//
// With idleStays, a schedule that owes nothing (its TAT at or before now) is left as it
// is: it admits the new burst at once, as a keyed limiter's new key does.
func (s *Schedule) Convert(now int64, old, nr *Rate, idleStays bool) {
	f := s.freedSet()
	f.mu.Lock()
	defer f.mu.Unlock()
	free := f.free(now, old.Interval, old.Tau, old.Cfg.Permits)
	holes := f.after(now)
	full := sat.Add(nr.Tau, nr.Interval) // new Permits·T
	for {
		p := s.TAT.Load()
		if p == MaxInt64 || p == DeadTAT || idleStays && p <= now {
			return
		}
		a := min(AvailableAt(p, old.Interval, old.Tau, now, old.Cfg.Permits)+free, old.Cfg.Permits)
		owed := max(sat.Sub(p, now)-holes, 0) // the freed slots lie in [now, p)
		// The fill and the whole permits free, as time of the new schedule.
		fill := sat.Sub(sat.Mul(int64(old.Cfg.Permits), nr.Interval), mulDivUp(owed, nr.Interval, old.Interval))
		carried := fill
		if a > 0 {
			carried = max(carried, sat.Mul(int64(a), nr.Interval))
		}
		carried = min(carried, full)
		if s.TAT.CompareAndSwap(p, sat.Add(now, sat.Sub(full, carried))) {
			break
		}
	}
	f.dropBefore(MaxInt64)
}

// after is how much of the freed slots lies after now. Called with f.mu.
func (f *freedSlots) after(now int64) int64 {
	var n int64
	for _, sp := range f.spans {
		if sp.to > now {
			n = sat.Add(n, sp.to-max(sp.from, now))
		}
	}
	return n
}

// mulDivUp returns ⌈a·b/c⌉ for a, b ≥ 0 and c > 0, saturating at the largest int64.
func mulDivUp(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return MaxInt64
	}
	q, r := bits.Div64(hi, lo, uint64(c))
	if r != 0 {
		q++
	}
	if q > MaxInt64 {
		return MaxInt64
	}
	return int64(q)
}

// ConvertAll converts every schedule that each yields from the rate old to nr (see
// Schedule.Convert for idleStays), when the change moves their rate: both are enabled,
// and Permits or the emission interval of their in-process share differ (share is the
// backend's LocalShare, 1 without one). The reservations granted before it then give
// nothing back when canceled (see Reservation.Cancel): the epoch moves, under the
// conversion lock.
func (b *Base) ConvertAll(old, nr *Rate, share int, idleStays bool, each func(func(*Schedule))) {
	if old.Cfg.Disabled || nr.Cfg.Disabled {
		return
	}
	o, n := old.LocalShare(share), nr.LocalShare(share)
	if o.Interval == n.Interval && o.Cfg.Permits == n.Cfg.Permits {
		return
	}
	b.Conv.Lock()
	defer b.Conv.Unlock()
	now := b.Now()
	each(func(s *Schedule) { s.Convert(now, o, n, idleStays) })
	b.Epoch.Add(1)
}
