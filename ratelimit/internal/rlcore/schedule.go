package rlcore

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/resilience4go/resilience4go/internal/sat"
)

// Schedule is one GCRA schedule: the TAT, and the slots that canceled reservations gave back
// below it. Every permit granted holds a slot, a stretch of n·T of the schedule's time
// that no other permit holds, whose start is at or after the permit's time and whose end
// is at most Permits·T after it . A reservation appended at the TAT
// takes [max(TAT, now), +n·T); one canceled while another stands behind it leaves its
// slot free, and the next call that fits takes it before appending at the TAT.
//
// The TAT only grows, by a CAS, except when the reservation that ends at it is canceled.
// Freed slots are kept under a lock, in a set made when the first one is freed; while the
// set is empty, taking a permit is one load of the set's pointer (nil) and GCRA on the TAT.
// The set keeps at most MaxFreed separate slots (a Reconfigure that trims them may leave
// one more), so that every scan of it costs the same however many
// reservations were canceled.
type Schedule struct {
	TAT   atomic.Int64               // the theoretical arrival time, in the clock's ns
	freed atomic.Pointer[freedSlots] // nil until a reservation that is not the last is canceled
}

// MaxFreed is how many separate freed slots a schedule keeps at most, as the Redis
// backend's script does: a cancel that would make one more separate slot gives nothing
// back. It bounds every scan of the set, so that a call that meets freed slots costs the
// same however many reservations were canceled.
const MaxFreed = 16

// freedSlots is the set of a schedule's freed slots.
type freedSlots struct {
	own   *Rate // the schedule's own rate (a keyed limiter's key with its own limit); nil: the limiter's
	mu    sync.Mutex
	n     atomic.Int32 // len(spans), read without the lock to skip the set when empty
	spans []span       // sorted, disjoint and not adjacent, each ending at or before the TAT
}

// DeadTAT is the TAT of the schedule of an evicted key of a keyed limiter: no clock time, so that a
// call that found the cell before its eviction takes nothing from it (GCRA and
// TakeFreed refuse it, with prev = DeadTAT) and looks its key up again, and a Cancel on it
// gives nothing back. A live TAT is never negative.
const DeadTAT = -1 << 63

// span is a stretch [from, to) of a schedule's time, in the clock's ns.
type span struct{ from, to int64 }

// Take reserves inc = n·T of the schedule for a call at now that may wait up to maxWait,
// with tol = (Permits-n)·T: a slot starting at x gives the permit at max(now, x-tol). It
// takes the earliest freed slot that holds inc and whose permit comes within maxWait, else
// appends at the TAT (GCRA). It returns the slot's start (prev: for an appended
// slot, the TAT before it) and end (next), and the wait; refused, the TAT as prev and
// next, and the retry-after as the wait.
//
// The hottest callers inline it: `if s.None() { GCRA } else { takeFreed }`.
func (s *Schedule) Take(now, inc, tol, maxWait int64) (prev, next, wait int64, ok bool) {
	if s.None() {
		return GCRA(&s.TAT, inc, tol, now, maxWait)
	}
	return s.TakeFreed(now, inc, tol, maxWait)
}

// SetOwn makes r the schedule's own rate, which RateOr returns: s must not be in use
// yet (a new cell, before it is published). The rate is kept in the freed set, made
// now, so that a schedule without one is no larger; while the set is empty, taking a
// permit is still GCRA on the TAT.
func (s *Schedule) SetOwn(r *Rate) { s.freed.Store(&freedSlots{own: r}) }

// RateOr returns the schedule's own rate (see SetOwn), or def when it has none: one load
// of the freed set's pointer.
func (s *Schedule) RateOr(def *Rate) *Rate {
	if f := s.freed.Load(); f != nil && f.own != nil {
		return f.own
	}
	return def
}

// Bare reports whether the schedule has neither a rate of its own nor a freed slot set:
// then take is GCRA on the TAT at the limiter's rate. One load of the set's pointer.
func (s *Schedule) Bare() bool { return s.freed.Load() == nil }

// Own reports whether the schedule has its own rate (see SetOwn).
func (s *Schedule) Own() bool {
	f := s.freed.Load()
	return f != nil && f.own != nil
}

// KillTAT marks the schedule dead whatever its TAT, as Kill(MaxInt64) does, and returns
// the TAT it had: what its key owed, for the schedule that takes its place.
func (s *Schedule) KillTAT() int64 {
	if f := s.freed.Load(); f != nil {
		f.mu.Lock()
		defer f.mu.Unlock()
	}
	for {
		t := s.TAT.Load()
		if t == DeadTAT || s.TAT.CompareAndSwap(t, DeadTAT) {
			return t
		}
	}
}

// None reports whether no freed slot is held: then take is GCRA on the TAT.
func (s *Schedule) None() bool {
	f := s.freed.Load()
	return f == nil || f.n.Load() == 0
}

// TakeFreed is take when slots were freed: under the set's lock, so that no two calls
// Take one freed slot.
func (s *Schedule) TakeFreed(now, inc, tol, maxWait int64) (prev, next, wait int64, ok bool) {
	f := s.freed.Load()
	f.mu.Lock()
	defer f.mu.Unlock()
	if s.TAT.Load() == DeadTAT { // evicted: kill holds f.mu to mark it
		return DeadTAT, DeadTAT, MaxInt64, false
	}
	f.dropBefore(now)
	for i := range f.spans {
		sp := &f.spans[i]
		from := max(sp.from, now)
		if sp.to-from < inc {
			continue
		}
		// The earliest slot that fits: every later one, and the TAT, come later still.
		wait = from - now - tol
		if wait > maxWait {
			tat := s.TAT.Load()
			return tat, tat, wait, false
		}
		sp.from = from + inc
		if sp.from == sp.to {
			f.spans = slices.Delete(f.spans, i, i+1)
			f.n.Store(int32(len(f.spans)))
		}
		return from, from + inc, max(wait, 0), true
	}
	return GCRA(&s.TAT, inc, tol, now, maxWait)
}

// GiveBack frees the slot [prev, next) of a reservation whose permit time has not passed
// at now (Reservation.Cancel checks it): when the slot ends at the TAT, the TAT moves
// back to its start, and on past the freed slots that then end at it; otherwise the slot,
// from now on, joins the freed set.
func (s *Schedule) GiveBack(prev, next, now int64) {
	if s.TAT.Load() == DeadTAT { // evicted: its key has started afresh
		return
	}
	f := s.freed.Load()
	if f == nil {
		if s.TAT.CompareAndSwap(next, prev) {
			// A slot freed meanwhile below this one may now end at the TAT.
			if f = s.freed.Load(); f != nil {
				f.mu.Lock()
				f.mergeTail(&s.TAT)
				f.n.Store(int32(len(f.spans)))
				f.mu.Unlock()
			}
			return
		}
		f = s.freedSet()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if s.TAT.CompareAndSwap(next, prev) {
		f.mergeTail(&s.TAT)
	} else if from, to := max(prev, now), min(next, s.TAT.Load()); from < to {
		// A slot that ends past the TAT was given back already (a second Cancel): only
		// what lies below the TAT can be free.
		f.insert(span{from, to})
	}
	f.n.Store(int32(len(f.spans)))
}

// Kill marks the schedule dead (see DeadTAT) if its TAT is at or before idleBy (MaxInt64:
// whatever it is), and reports whether it did. A call that found the cell before then
// either took its permit before, or finds it dead and takes nothing: the freed set's lock,
// when there is one, is held, so that no freed slot is taken after the mark.
func (s *Schedule) Kill(idleBy int64) bool {
	if f := s.freed.Load(); f != nil {
		f.mu.Lock()
		defer f.mu.Unlock()
	}
	for {
		t := s.TAT.Load()
		if t > idleBy {
			return false
		}
		if s.TAT.CompareAndSwap(t, DeadTAT) {
			return true
		}
	}
}

// freedSet returns the schedule's freed set, made if it has none.
func (s *Schedule) freedSet() *freedSlots {
	if f := s.freed.Load(); f != nil {
		return f
	}
	s.freed.CompareAndSwap(nil, &freedSlots{})
	return s.freed.Load()
}

// mergeTail moves the TAT back over the freed slots that end at it. Called with f.mu.
func (f *freedSlots) mergeTail(tat *atomic.Int64) {
	for len(f.spans) > 0 {
		last := f.spans[len(f.spans)-1]
		if !tat.CompareAndSwap(last.to, last.from) {
			return
		}
		f.spans = f.spans[:len(f.spans)-1]
	}
}

// insert adds sp to the set, joining it with the slots it touches; a slot that touches
// None while MaxFreed are kept is not added: its permits are not given back. Called with
// f.mu.
func (f *freedSlots) insert(sp span) {
	i, _ := slices.BinarySearchFunc(f.spans, sp.from, func(x span, from int64) int {
		switch {
		case x.from < from:
			return -1
		case x.from > from:
			return 1
		}
		return 0
	})
	joinsBefore := i > 0 && f.spans[i-1].to >= sp.from
	if !joinsBefore && len(f.spans) >= MaxFreed && (i == len(f.spans) || f.spans[i].from > sp.to) {
		return
	}
	// Join the slot before, and any after that sp reaches (a slot given back twice
	// overlaps itself: the union keeps the set sorted and disjoint).
	if joinsBefore {
		i--
		sp.from = f.spans[i].from
		sp.to = max(sp.to, f.spans[i].to)
		f.spans = slices.Delete(f.spans, i, i+1)
	}
	for i < len(f.spans) && f.spans[i].from <= sp.to {
		sp.to = max(sp.to, f.spans[i].to)
		f.spans = slices.Delete(f.spans, i, i+1)
	}
	f.spans = slices.Insert(f.spans, i, sp)
}

// dropBefore forgets the freed slots that end at or before now: no permit can use them.
// Called with f.mu.
func (f *freedSlots) dropBefore(now int64) {
	k := 0
	for k < len(f.spans) && f.spans[k].to <= now {
		k++
	}
	if k > 0 {
		f.spans = slices.Delete(f.spans, 0, k)
		f.n.Store(int32(len(f.spans)))
	}
}

// Available is how many single permits a call at now could take without waiting, at
// most permits: those the TAT leaves (AvailableAt) and those of the freed slots, for
// emission interval T and tau = (Permits-1)·T. A slot [x, x+T) is free now when
// x ≥ now and x+T ≤ now+tau+T.
func (s *Schedule) Available(now, interval, tau int64, permits int) int {
	n := 0
	switch tat := s.TAT.Load(); tat {
	case MaxInt64: // a saturated TAT refuses every call
	case DeadTAT: // evicted: its key starts afresh, with a full burst
		return permits
	default:
		n = AvailableAt(tat, interval, tau, now, permits)
	}
	f := s.freed.Load()
	if f == nil || f.n.Load() == 0 || n >= permits {
		return n
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return min(n+f.free(now, interval, tau, permits-n), permits)
}

// free is how many single permits, at most limit, the freed slots hold that a call at
// now could take without waiting. Called with f.mu.
func (f *freedSlots) free(now, interval, tau int64, limit int) int {
	n := 0
	end := sat.Add(now, sat.Add(tau, interval))
	for _, sp := range f.spans {
		if to, from := min(sp.to, end), max(sp.from, now); to-from >= interval {
			k := (to - from) / interval
			if k >= int64(limit-n) {
				return limit
			}
			n += int(k)
		}
	}
	return n
}

// NextFree is how long after now a single permit is free, ≥ 0: at the TAT, or in the
// earliest freed slot that holds T; the largest Duration for a saturated TAT, which
// refuses every call.
func (s *Schedule) NextFree(now, interval, tau int64) int64 {
	wait := int64(MaxInt64)
	if tat := s.TAT.Load(); tat != MaxInt64 {
		wait = sat.Sub(max(tat, now), now) - tau
	}
	if f := s.freed.Load(); f != nil && f.n.Load() != 0 {
		f.mu.Lock()
		for _, sp := range f.spans {
			if from := max(sp.from, now); sp.to-from >= interval {
				wait = min(wait, from-now-tau)
				break
			}
		}
		f.mu.Unlock()
	}
	return max(wait, 0)
}

// Freed returns how many separate freed slots the schedule keeps (at most MaxFreed), and
// the count of them that calls read without the lock, which must be the same.
func (s *Schedule) Freed() (spans, counted int) {
	f := s.freed.Load()
	if f == nil {
		return 0, 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.spans), int(f.n.Load())
}
