package adaptivelimit

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/internal/slots"
)

// Limiter limits how many calls are in flight at once, to a limit that moves with the
// latency it measures. It is safe for concurrent use; its configuration is fixed when it
// is built.
//
// A call is let in when fewer calls than its priority's share of the limit are in flight
// (the whole limit for a critical call, or one without a priority: see
// Config.PriorityReserve) and nobody of its priority or above waits. The
// calls in flight and an admission counter share one atomic word: a call is let in, and
// numbered, with one compare-and-swap, and counted out with another. Its latency is read
// on the limiter's clock when it is let in and when it returns (a synchronous call, also
// when it panics) or its future completes (an asynchronous call); a call rejected at once
// touches nothing else. Neither allocates.
//
// A call that does not fit is rejected at once with the limiter's rejection, matching
// ErrLimitExceeded (MaxWait 0, the default), or waits up to MaxWait in a queue, by priority
// and FIFO within one: while anyone of its priority or above waits, a newcomer queues
// behind them (no barging). A synchronous waiter blocks on
// the caller's goroutine; an asynchronous waiter is a queued callback, not a goroutine,
// which starts the call on the goroutine that made room for it, is rejected by a clock
// timer after MaxWait, and leaves the queue at once when its future is canceled or its
// context ends. When the limit rises, waiters are let in at once, on the goroutine whose
// sample raised it. When it falls below the calls in flight, they go on, and nobody new
// is let in until fewer calls than the new limit are in flight.
//
// A call whose context is nil or already done when it arrives is let in by nobody, never
// runs the function and publishes nothing: it is rejected at once with the limiter's
// rejection built with the context's error, so that errors.Is finds both
// ErrLimitExceeded and that error (policy.ErrNilContext for a nil context).
type Limiter struct {
	// Read-only after New.
	slow           time.Duration // a call slower than this is a drop (AIMD); else never
	minLim, maxLim float64
	cfg            Config
	events         contract.Events

	s slots.Slots // the calls in flight under the limit, the queue and the rejections

	amu        sync.Mutex // the algorithm's lock: taken once per sample that counts
	algo       algorithm
	value      float64       // the limit, unrounded
	cur        round         // the round in progress
	roundStart uint32        // the admission counter when the round began
	epoch      atomic.Uint32 // the admission counter when the limit last changed

	// For Snapshot, which a listener called under amu may read: the average latency of
	// the last round and the algorithm's baseline after it.
	latency, baseline atomic.Int64
}

// New builds an adaptive limiter from opts, on top of the defaults: Vegas, InitialLimit
// 20, MinLimit 1, MaxLimit 200, MaxWait 0 (waiting is opt-in, as for the bulkhead),
// BackoffRatio 0.9, LatencyThreshold 5s, Tolerance 1.5, Smoothing 0.2, BaselineWindow 50,
// no DropOn or IgnoreOn, enabled (see Config). A disabled limiter lets every call through
// and counts nothing. An
// invalid configuration returns a *policy.ConfigError: R4C-ATR-007 for an unknown
// algorithm, limits out of order or a parameter out of its range, R4C-ATR-004 for a
// negative duration. The instance id is the Name, else "" (no id: its errors and events name no instance).
func New(opts ...Option) (*Limiter, error) { return contract.New(defaults, build, opts) }

// build builds an adaptive limiter from s.
func build(s settings) (*Limiter, error) {
	if err := s.Config.validate(); err != nil {
		return nil, err
	}
	contract.Own(&s.DropOn, &s.IgnoreOn)
	id := s.ID("")
	l := &Limiter{
		slow:   math.MaxInt64,
		minLim: float64(s.MinLimit),
		maxLim: float64(s.MaxLimit),
		cfg:    s.Config,
		events: s.EventsOf(Layer, id),
		algo:   newAlgorithm(s.Config),
		value:  float64(s.InitialLimit),
	}
	if s.Algorithm == AIMD {
		l.slow = s.LatencyThreshold
	}
	l.s.Init(&l.events, slots.Config{
		Enabled: !s.Disabled, Clock: s.ClockOrSystem(),
		Layer: Layer, Sentinel: ErrLimitExceeded, Message: exceededMessage(id),
		Rejected: EventRejected, Waited: EventWaited,
		Limit: s.InitialLimit, MaxWait: s.MaxWait, Reserve: s.PriorityReserve,
		Timed: true, Done: completer{l}, Shadow: s.Shadow,
	})
	return l, nil
}

// Permit is a call's room under the limit, from Acquire. Give it back
// once, with Record (the call's outcome is a sample for the algorithm) or Release (no
// sample), called on the variable that holds it: giving it back empties that variable,
// so a second Record or Release on it does nothing. A copy of a Permit is the same room:
// give it back through one copy only (as with a lock, do not copy it around). Its zero
// value, and the permit of a disabled limiter, give back nothing. A Permit is a small
// value: taking and giving one back allocates nothing.
type Permit struct {
	l *Limiter
	p slots.Permit // when the call was let in, its ticket and the calls in flight with it
}

// Record gives the permit back with the call's outcome err, which the algorithm takes as
// a sample: the latency from the permit's start to now, on the limiter's clock, and
// whether the call was a drop. nil is a success; an error matching IgnoreOn, or a
// cancellation (async.ErrCanceled, context.Canceled), leaves no sample; an error matching
// context.DeadlineExceeded or DropOn is a drop; another error is a sample like a
// success. These are NewPolicy's rules, without a context: an error once a context has
// passed its deadline is not a drop here, but with AIMD a call slower than
// LatencyThreshold is. Waiters are let in as room comes. Calling it again, or Release, on
// the same variable does nothing.
func (p *Permit) Record(err error) {
	if q := *p; q.l != nil {
		*p = Permit{}
		ctx := context.Background()
		q.l.complete(ctx, q.p, q.l.classify(ctx, err))
	}
}

// Release gives the permit back without a sample, e.g. for a call that never reached the
// dependency. Waiters are let in as room comes. Calling it again, or Record, on the same
// variable does nothing.
func (p *Permit) Release() {
	if q := *p; q.l != nil {
		*p = Permit{}
		q.l.complete(context.Background(), q.p, ignored)
	}
}

// Acquire lets a call in, at the priority ctx carries, waiting on the caller's goroutine up
// to MaxWait, by priority and in FIFO order within one.
// It returns the call's permit (give it back with Record or Release), or the limiter's
// rejection, which matches ErrLimitExceeded:
//   - at once, letting nothing in and publishing nothing, when ctx is nil or already done
//     (the error also matches ctx's error, or policy.ErrNilContext);
//   - at once, when the call does not fit and MaxWait is 0;
//   - after MaxWait on the limiter's clock;
//   - when ctx ends during the wait (the error also matches ctx's error).
//
// With MaxWait 0 (the default), Acquire never waits: it lets the call in if it fits under
// its priority's share of the limit now and nobody of its priority or above waits, and
// refuses it otherwise. A call that waited publishes
// EventWaited, a rejection of a live ctx EventRejected, both with ctx. Its outcome is
// recorded with ctx, as a decorated call's is (see NewPolicy): ResultAdmitted with the
// wait, or ResultRejected (also on arrival). Acquire allocates nothing unless it has to
// wait. A disabled limiter returns a permit that gives back nothing at once, but for a
// nil or done ctx, whose error it returns as is.
func (l *Limiter) Acquire(ctx context.Context) (Permit, error) {
	if !l.s.Enabled() {
		return Permit{}, decorate.ContextErr(ctx)
	}
	p, err := l.s.Acquire(ctx)
	if err != nil {
		if err == slots.ErrShadow { // let through, holding nothing
			return Permit{}, nil
		}
		return Permit{}, err
	}
	return Permit{l: l, p: p}, nil
}

// The outcomes of a call, for the algorithm.
type outcome uint8

const (
	success outcome = iota // a sample
	dropped                // a sample that is a drop
	ignored                // no sample
)

// classify says what the outcome err of a call made with ctx is to the algorithm.
func (l *Limiter) classify(ctx context.Context, err error) outcome {
	switch {
	case err == nil:
		return success
	case contract.Matches(err, l.cfg.IgnoreOn):
		return ignored
	case errors.Is(err, context.DeadlineExceeded), contract.Matches(err, l.cfg.DropOn):
		return dropped
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		// The caller's deadline passed (an outer timeout, which may cancel the call's
		// future): the call took too long.
		return dropped
	case errors.Is(err, async.ErrCanceled), errors.Is(err, context.Canceled):
		return ignored
	}
	return success
}

// complete gives back p's room, records its sample unless o is ignored, and lets
// waiters in; ctx is the context of the call that completes, which an EventChanged event
// its sample causes carries. It counts the call out (or raises the limit) before it lets
// waiters in: see slots.Slots.Wake.
func (l *Limiter) complete(ctx context.Context, p slots.Permit, o outcome) {
	var end time.Duration
	if o != ignored {
		end = l.s.Now()
	}
	l.s.Free()
	if o != ignored {
		l.record(ctx, p, sat.Left(end, p.Start), o == dropped)
	}
	l.s.Wake()
}

// completer is a limiter as the Completer of its slots: a decorated call's outcome is a
// sample, by NewPolicy's rules.
type completer struct{ l *Limiter }

// Complete gives back the room of the call let in with p, with its outcome err.
func (c completer) Complete(ctx context.Context, p slots.Permit, err error) {
	c.l.complete(ctx, p, c.l.classify(ctx, err))
}

// record adds the sample of the call with ctx let in with p to the round, and ends the
// round when it is over; an EventChanged it publishes carries ctx. A call let in
// before the limit last changed says nothing of the limit now: its sample is left out. A
// round is over with the first sample of a call let in after it began (a round spans at
// least one call's latency) once it holds half as many samples as the most calls that
// were in flight with one of them.
func (l *Limiter) record(ctx context.Context, p slots.Permit, latency time.Duration, drop bool) {
	if !after(l.s.Counter(), p.Ticket, l.epoch.Load()) {
		return
	}
	drop = drop || latency > l.slow
	l.amu.Lock()
	defer l.amu.Unlock()
	now := l.s.Counter()
	if !after(now, p.Ticket, l.epoch.Load()) { // the limit changed meanwhile
		return
	}
	l.age(now)
	r := &l.cur
	r.add(latency, int(p.InFlight), drop)
	if !after(now, p.Ticket, l.roundStart) || 2*r.n < r.maxInFlight {
		return
	}
	prev := l.s.Limit()
	if v := l.algo.next(l.value, r); v == v { // not NaN
		l.value = max(l.minLim, min(l.maxLim, v))
	}
	l.latency.Store(int64(r.mean()))
	l.baseline.Store(int64(l.algo.baseline()))
	*r = round{}
	next := int(l.value)
	if next == prev {
		l.roundStart = l.s.Counter()
		return
	}
	// Stored before the counter is read: a call counted after it was let in under the
	// new limit, and one let in under it but counted before is merely left out.
	l.s.SetLimit(next)
	counter := l.s.Counter()
	l.epoch.Store(counter)
	l.roundStart = counter
	l.events.PublishCtx(ctx, policy.Event{Kind: EventChanged, Attrs: policy.EventAttrs{
		slog.Int(attrLimit, next), slog.Int(attrPreviousLimit, prev)}})
}

// after reports whether the call with ticket t was let in after the admission counter
// read mark, by their ages against the counter now: right as long as both are less than
// 2³² admissions old, which age keeps true of the marks. (Comparing t and mark alone
// would take a mark 2³¹ admissions old for a future one.)
func after(now, t, mark uint32) bool { return now-t < now-mark }

// maxAge is how many admissions old age lets the epoch and the round's start grow.
const maxAge = 1 << 31

// age moves the epoch and the round's start forward to maxAge admissions before now when
// they are older, so that after can still order them against the tickets of calls in
// flight: a limit that has not changed for 2³¹ admissions, or a round that has not ended,
// would otherwise look as if it began after them. A call in flight for more than maxAge
// admissions then has its sample left out. Called with amu held.
func (l *Limiter) age(now uint32) {
	if now-l.epoch.Load() > maxAge {
		l.epoch.Store(now - maxAge) // written under amu only
	}
	if now-l.roundStart > maxAge {
		l.roundStart = now - maxAge
	}
}
