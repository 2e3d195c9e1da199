// Package slots is the admission of the policies that limit how many calls are in flight
// at once, a fixed number reloaded only by a registry (the bulkhead's MaxConcurrent) or a
// limit that follows the latency (the adaptive limit): the counter of the calls in flight
// under the limit, the queue of the calls that wait for room (package waitq), the
// synchronous and asynchronous ways in and out of it, the events and outcomes of each
// decision, and the rejections.
//
// Priorities: a call carries a level in its context (policy.PriorityFrom). A Slots keeps
// part of its limit for the higher levels: a call of level p is let in only while the
// calls in flight, of every level, are fewer than p's share of the limit (Cap), and the
// queue hands room to the highest level first, FIFO within a level. The share of
// policy.PriorityCritical and above is the whole limit; below it, Reserve (a fraction r)
// takes r/2 off for PrioritySheddablePlus and r for PrioritySheddable. A call refused
// for want of room while room remained under the limit, kept for higher levels, is shed
// for its priority: it is counted by level (Shed) and its rejection event says so.
//
// A policy embeds a Slots, readies it with Init and guards functions with Decorate (or
// Func and AsyncFunc). What differs between the policies is what they supply: the limit
// (SetLimit), MaxWait (SetMaxWait), whether a call's permit carries the time it was let
// in, and, through a Completer, what a call's outcome does when it completes (the
// adaptive limit takes a sample of its latency; without a Completer the slot is simply
// given back).
package slots

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/rejections"
	"github.com/resilience4go/resilience4go/internal/sysclock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/internal/waitq"
)

// A Permit is a call's room under the limit: the admission counter after the call was
// let in (its ticket), the calls in flight once it was let in, itself included, and, when
// the Slots is Timed, the time it was let in on the policy's clock (else 0). It is a small
// value: taking and giving one back allocates nothing.
type Permit struct {
	Start    time.Duration // when the call was let in, on the clock; 0 unless Timed
	Ticket   uint32        // the admission counter after the call was let in
	InFlight uint32        // calls in flight once it was let in, itself included
}

// A Completer is what a policy does when a call it let in completes, in place of giving
// its slot back at once (see Slots.Complete).
type Completer interface {
	// Complete is called once per call let in with p, with the call's context and its
	// outcome err, when the call returns or its future completes. It must count the call
	// out (Slots.Free) and then let the waiters in (Slots.Wake); what it does besides,
	// between the two or before, is the policy's.
	Complete(ctx context.Context, p Permit, err error)
}

// Config is what a policy supplies to Init.
type Config struct {
	Enabled bool        // false: Decorate lets every call through, behind the arrival check
	Clock   clock.Clock // the policy's clock: waits, and the permits' start
	// Layer, Sentinel and Message make the policy's rejections (see Rejection): Sentinel
	// is the errors.Is target of them all (made by NewSentinel), Message the message of
	// the instance's, which names it.
	Layer    policy.Layer
	Sentinel error
	Message  string
	Rejected policy.EventKind // the kind of the event of a rejection
	Waited   policy.EventKind // the kind of the event of a call let in after waiting
	Limit    int              // the limit on the calls in flight, at least 1
	MaxWait  time.Duration    // how long a call may wait for room; 0: never
	Reserve  float64          // the fraction of the limit kept from sheddable calls, in [0, 1]
	Timed    bool             // permits carry the time they were let in (Permit.Start)
	Done     Completer        // nil: a call's slot is given back when it completes
	Shadow   bool             // shadow mode (see SetShadow)
}

// Slots admits calls under a limit on the calls in flight. Its zero value is unusable:
// call Init first, after which its methods are safe for concurrent use. A Slots must not
// be copied after Init.
//
// The calls in flight and an admission counter share one atomic word: a call that fits
// under the limit while nobody waits is let in, and numbered, with one compare-and-swap,
// and counted out with another; neither allocates. A call that does not fit is rejected at
// once (MaxWait 0) or waits, in a FIFO queue, up to MaxWait; while anyone waits, newcomers
// queue behind them (no barging).
type Slots struct {
	// Read-only after Init.
	enabled bool
	timed   bool // permits carry their start
	system  bool // clk is clock.System(): read the monotonic clock directly
	clk     clock.Clock
	done    Completer
	rej     rejections.Set[error]
	sw      waitq.Sync[Permit, error] // the blocking wait, the wait events and the rejections
	maxWait atomic.Int64              // MaxWait, in nanoseconds; changed by SetMaxWait only
	reserve atomic.Int64              // Reserve, in millionths; changed by SetReserve only
	shed    [levels]atomic.Int64      // the calls shed for their priority, by level
	shadow  atomic.Bool               // shadow mode; changed by SetShadow only
	shadowN atomic.Uint64             // the calls let through in shadow mode that found no room

	_ [64]byte // a whole 64-byte cache line between the fields above and the counters
	// word is the admission counter (high 32 bits, wrapping) and the calls in flight (low
	// 32 bits): one compare-and-swap admits a call and numbers it.
	word   atomic.Uint64
	limit  atomic.Int64 // the limit on calls in flight
	queued atomic.Int64 // waiters in the queue; changed by q, read without its lock
	_      [40]byte     // 64-byte cache line - 24 bytes of counters

	q waitq.Queue[Permit] // the FIFO queue of waiters; changes queued
}

// Init readies s for the policy instance whose publisher and recorder is pub (which must
// outlive s), with c. It must be called once, before s is shared.
func (s *Slots) Init(pub *contract.Events, c Config) {
	s.enabled, s.timed, s.done = c.Enabled, c.Timed, c.Done
	s.clk, s.system = c.Clock, sysclock.Is(c.Clock)
	s.rej = rejections.New(func(cause error) error {
		return newRejection(c.Layer, c.Sentinel, pub.ID, c.Message, cause)
	})
	s.sw = waitq.Sync[Permit, error]{
		Events: waitq.Events[error]{Pub: pub, Rej: &s.rej, Clock: c.Clock,
			Rejected: c.Rejected, Waited: c.Waited, Shed: s.shedFor},
		Queue: &s.q, Recheck: s.recheck, GiveBack: func(Permit) { s.Release() },
	}
	s.limit.Store(int64(c.Limit))
	s.maxWait.Store(int64(c.MaxWait))
	s.SetReserve(c.Reserve)
	s.shadow.Store(c.Shadow)
	s.q.Init(&s.queued, s.room)
}

// ErrShadow is what Acquire returns for a call let through in shadow mode: it holds no
// room, and gives nothing back when it completes. It is never a call's result.
var ErrShadow = errors.New("slots: let through in shadow mode")

// SetShadow sets shadow mode, for the calls that arrive from now on: a call that finds no
// room at once is let through at once, holding no room, instead of waiting or being
// rejected; it is counted (ShadowRejected), counted as shed if it would have been, and
// reported with Events.Shadowed. A call already waiting goes on waiting.
func (s *Slots) SetShadow(on bool) { s.shadow.Store(on) }

// Shadow reports whether s is in shadow mode.
func (s *Slots) Shadow() bool { return s.shadow.Load() }

// ShadowRejected returns how many calls s let through in shadow mode that found no room,
// since it was built.
func (s *Slots) ShadowRejected() uint64 { return s.shadowN.Load() }

// shadowed counts and reports the call with ctx and priority p that found no room at once
// and is let through in shadow mode (the caller has checked s.shadow).
func (s *Slots) shadowed(ctx context.Context, p policy.Priority) {
	s.shadowN.Add(1)
	s.sw.Shadowed(ctx, p < policy.PriorityCritical && s.shedFor(p))
}

// Enabled reports whether s was built enabled.
func (s *Slots) Enabled() bool { return s.enabled }

// Events returns how s reports admissions and rejections: the events, the outcomes and
// the rejection errors.
func (s *Slots) Events() *waitq.Events[error] { return &s.sw.Events }

// Rejection returns the plain rejection: the one of a call that found no room at once
// (MaxWait 0) or within MaxWait.
func (s *Slots) Rejection() error { return s.rej.Plain }

// Now reads the clock.
func (s *Slots) Now() time.Duration {
	if s.system {
		return sysclock.Now()
	}
	return s.clk.Now()
}

// Limit returns the limit on calls in flight.
func (s *Slots) Limit() int { return int(s.limit.Load()) }

// SetLimit sets the limit on calls in flight to n, at least 1. The calls in flight go on:
// when n is below them, nobody is let in until fewer than n are in flight. A policy that
// raises the limit lets the waiters in with Wake.
func (s *Slots) SetLimit(n int) { s.limit.Store(int64(n)) }

// MaxWait returns how long a call that arrives now may wait for room.
func (s *Slots) MaxWait() time.Duration { return time.Duration(s.maxWait.Load()) }

// SetMaxWait sets how long the calls that arrive from now on may wait for room; a call
// already waiting keeps the MaxWait it arrived with.
func (s *Slots) SetMaxWait(d time.Duration) { s.maxWait.Store(int64(d)) }

// InFlight returns the calls in flight.
func (s *Slots) InFlight() int { return int(uint32(s.word.Load())) }

// Queued returns the calls waiting for room.
func (s *Slots) Queued() int { return int(s.queued.Load()) }

// Counter returns the admission counter now: the ticket of the last call let in. It wraps
// at 2³².
func (s *Slots) Counter() uint32 { return uint32(s.word.Load() >> 32) }

// SetCounter sets the admission counter to c, as c admissions would have left it, with no
// call in flight: a test's way to reach the counter's wrap. It must be called before s
// lets any call in.
func (s *Slots) SetCounter(c uint32) { s.word.Store(uint64(c) << 32) }

// take counts a call of level p in if the calls in flight are below p's share of the
// limit, and returns its ticket (the admission counter after it) and the calls in flight
// with it.
func (s *Slots) take(p policy.Priority) (ticket, inFlight uint32, ok bool) {
	for {
		w := s.word.Load()
		n := uint32(w)
		if int64(n) >= s.Cap(p) {
			return 0, 0, false
		}
		next := w + 1<<32 + 1 // the counter wraps; in flight never reaches 2³²
		if s.word.CompareAndSwap(w, next) {
			return uint32(next >> 32), n + 1, true
		}
	}
}

// Free counts a call out, without letting anyone in (see Wake). A call counted out twice
// finds no call in flight at last and does nothing.
func (s *Slots) Free() {
	for {
		w := s.word.Load()
		if uint32(w) == 0 {
			return
		}
		if s.word.CompareAndSwap(w, w-1) {
			return
		}
	}
}

// Wake lets the waiters in, oldest first, as long as there is room: after Free, or after
// SetLimit raised the limit. A waiter queued concurrently is not missed: it raises
// queued before it looks for room (recheck), and Wake is called after the room was made,
// before it reads queued, so at least one of them sees the other.
func (s *Slots) Wake() {
	if s.queued.Load() != 0 {
		s.q.Dispatch()
	}
}

// Release gives a call's slot back without anything else (Free, then Wake).
func (s *Slots) Release() {
	s.Free()
	s.Wake()
}

// Complete gives back the slot of a call let in with p whose context is ctx, which has
// completed with err: through the Completer, if the policy has one, else with Release.
func (s *Slots) Complete(ctx context.Context, p Permit, err error) {
	if s.done == nil {
		s.Release()
		return
	}
	s.done.Complete(ctx, p, err)
}

// room lets a waiter of level p in if it fits under p's share of the limit: the queue's
// step. Its permit's Start is set when the call starts (see permit).
func (s *Slots) room(p policy.Priority) (Permit, bool) {
	ticket, n, ok := s.take(p)
	return Permit{Ticket: ticket, InFlight: n}, ok
}

// recheck lets the queue in if room came while a waiter was being queued (see Wake).
func (s *Slots) recheck() {
	if int64(uint32(s.word.Load())) < s.limit.Load() {
		s.q.Dispatch()
	}
}

// permit returns p with its clock started now, if permits are timed.
func (s *Slots) permit(p Permit) Permit {
	if s.timed {
		p.Start = s.Now()
	}
	return p
}

// levels is how many priority levels a Slots tells apart.
const levels = int(policy.PriorityCriticalPlus) + 1

// million is the denominator of the reserve, kept in millionths.
const million = 1_000_000

// SetReserve sets the fraction of the limit kept from the calls below
// policy.PriorityCritical, r in [0, 1] (the policy validates it): r for
// PrioritySheddable, r/2 for PrioritySheddablePlus. Raised, it applies to the calls let
// in from now on; lowered, a policy lets the waiters in with Wake.
func (s *Slots) SetReserve(r float64) { s.reserve.Store(int64(r*million + 0.5)) }

// Cap returns how many calls, of every level, may be in flight when a call of level p is
// let in: its share of the limit. It is the limit for policy.PriorityCritical and above;
// below, the limit less its reserve (see SetReserve), rounded down, but at least 1: a
// call of any level is let in when nothing is in flight. A lower level's share is never
// above a higher one's.
func (s *Slots) Cap(p policy.Priority) int64 {
	limit := s.limit.Load()
	if p >= policy.PriorityCritical {
		return limit
	}
	r := s.reserve.Load()
	if r == 0 {
		return limit
	}
	l := min(limit, 1<<32) // in flight never reaches 2³²; keeps the product in range
	k := int64(policy.PriorityCritical - p)
	return max(l-(l*r*k+2*million-1)/(2*million), 1)
}

// Shed returns the calls shed for their priority since s was built, by level (see
// package doc): refused for want of room while fewer calls than the limit were in
// flight, but as many as the level's share of it or more: the room left was kept for
// higher levels.
func (s *Slots) Shed() (n [levels]int64) {
	for i := range n {
		n[i] = s.shed[i].Load()
	}
	return n
}

// full reports the rejection, at once, of a call with ctx and priority p that found no
// room: counted if it is shed, published and recorded as Events.Full does. It costs a
// comparison for a critical call besides the rejection's own cost.
func (s *Slots) full(ctx context.Context, p policy.Priority) {
	s.sw.RejectShed(ctx, 0, s.rej.Plain, p < policy.PriorityCritical && s.shedFor(p))
}

// shedFor reports whether a call of level p refused now for want of room is shed for its
// priority, and counts it if so: the calls in flight are below the limit but not below
// p's share of it (Cap).
func (s *Slots) shedFor(p policy.Priority) bool {
	if p >= policy.PriorityCritical {
		return false
	}
	n := int64(uint32(s.word.Load()))
	if n >= s.limit.Load() || n < s.Cap(p) {
		return false
	}
	s.shed[p].Add(1)
	return true
}
