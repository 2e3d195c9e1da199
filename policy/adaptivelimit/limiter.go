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
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/rejections"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/internal/sysclock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/internal/waitq"
)

// Limiter limits how many calls are in flight at once, to a limit that moves with the
// latency it measures. It is safe for concurrent use; its configuration is fixed when it
// is built.
//
// A call is let in when fewer calls than the limit are in flight and nobody waits. The
// calls in flight and an admission counter share one atomic word: a call is let in, and
// numbered, with one compare-and-swap, and counted out with another. Its latency is read
// on the limiter's clock when it is let in and when it returns (a synchronous call, also
// when it panics) or its future completes (an asynchronous call); a call rejected at once
// touches nothing else. Neither allocates.
//
// A call that does not fit is rejected at once with the limiter's rejection, matching
// ErrLimitExceeded (MaxWait 0, the default), or waits up to MaxWait in a FIFO queue: while
// anyone waits, newcomers queue behind them (no barging). A synchronous waiter blocks on
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
	enabled        bool
	system         bool // clk is clock.System(): read the monotonic clock directly
	maxWait        time.Duration
	slow           time.Duration // a call slower than this is a drop (AIMD); else never
	minLim, maxLim float64
	clk            clock.Clock
	cfg            Config
	events         contract.Events
	rej            rejections.Set[*exceededError]
	sw             waitq.Sync[admission, *exceededError] // the blocking wait, and the wait events

	_ [64]byte // a whole 64-byte cache line between the read-only fields and the counters
	// word is the admission counter (high 32 bits, wrapping) and the calls in flight (low
	// 32 bits): one compare-and-swap admits a call and numbers it.
	word   atomic.Uint64
	limit  atomic.Int64  // the limit on calls in flight
	queued atomic.Int64  // waiters in the queue; changed by q, read without its lock
	epoch  atomic.Uint32 // the admission counter when the limit last changed
	_      [36]byte      // 64-byte cache line - 28 bytes of counters

	q waitq.Queue[admission] // the FIFO queue of waiters; changes queued

	amu        sync.Mutex // the algorithm's lock: taken once per sample that counts
	algo       algorithm
	value      float64 // the limit, unrounded
	cur        round   // the round in progress
	roundStart uint32  // the admission counter when the round began

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

func build(s settings) (*Limiter, error) {
	if err := s.Config.validate(); err != nil {
		return nil, err
	}
	contract.Own(&s.DropOn, &s.IgnoreOn)
	id := s.ID("")
	clk := s.ClockOrSystem()
	l := &Limiter{
		enabled: !s.Disabled,
		system:  sysclock.Is(clk),
		maxWait: s.MaxWait,
		slow:    math.MaxInt64,
		minLim:  float64(s.MinLimit),
		maxLim:  float64(s.MaxLimit),
		clk:     clk,
		cfg:     s.Config,
		events:  s.EventsOf(Layer, id),
		rej:     rejections.New(func(cause error) *exceededError { return newExceeded(id, cause) }),
		algo:    newAlgorithm(s.Config),
		value:   float64(s.InitialLimit),
	}
	if s.Algorithm == AIMD {
		l.slow = s.LatencyThreshold
	}
	l.limit.Store(int64(s.InitialLimit))
	l.q.Init(&l.queued, l.room)
	l.sw = waitq.Sync[admission, *exceededError]{
		Events: waitq.Events[*exceededError]{Pub: &l.events, Rej: &l.rej, Clock: l.clk,
			Rejected: EventRejected, Waited: EventWaited},
		Queue: &l.q, MaxWait: l.maxWait, Recheck: l.recheck, GiveBack: l.giveBack,
	}
	return l, nil
}

// now reads the limiter's clock.
func (l *Limiter) now() time.Duration {
	if l.system {
		return sysclock.Now()
	}
	return l.clk.Now()
}

// Permit is a call's room under the limit, from Acquire. Give it back
// once, with Record (the call's outcome is a sample for the algorithm) or Release (no
// sample), called on the variable that holds it: giving it back empties that variable,
// so a second Record or Release on it does nothing. A copy of a Permit is the same room:
// give it back through one copy only (as with a lock, do not copy it around). Its zero
// value, and the permit of a disabled limiter, give back nothing. A Permit is a small
// value: taking and giving one back allocates nothing.
type Permit struct {
	l        *Limiter
	start    time.Duration // when the call was let in, on the limiter's clock
	ticket   uint32        // the admission counter after the call was let in
	inFlight uint32        // calls in flight once it was let in, itself included
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
		q.l.complete(ctx, q, q.l.classify(ctx, err))
	}
}

// Release gives the permit back without a sample, e.g. for a call that never reached the
// dependency. Waiters are let in as room comes. Calling it again, or Record, on the same
// variable does nothing.
func (p *Permit) Release() {
	if q := *p; q.l != nil {
		*p = Permit{}
		q.l.complete(context.Background(), q, ignored)
	}
}

// Acquire lets a call in, waiting on the caller's goroutine up to MaxWait, in FIFO order.
// It returns the call's permit (give it back with Record or Release), or the limiter's
// rejection, which matches ErrLimitExceeded:
//   - at once, letting nothing in and publishing nothing, when ctx is nil or already done
//     (the error also matches ctx's error, or policy.ErrNilContext);
//   - at once, when the call does not fit and MaxWait is 0;
//   - after MaxWait on the limiter's clock;
//   - when ctx ends during the wait (the error also matches ctx's error).
//
// With MaxWait 0 (the default), Acquire never waits: it lets the call in if it fits under
// the limit now and nobody waits, and refuses it otherwise. A call that waited publishes
// EventWaited, a rejection of a live ctx EventRejected, both with ctx. Its outcome is
// recorded with ctx, as a decorated call's is (see NewPolicy): ResultAdmitted with the
// wait, or ResultRejected (also on arrival). Acquire allocates nothing unless it has to
// wait. A disabled limiter returns a permit that gives back nothing at once, but for a
// nil or done ctx, whose error it returns as is.
func (l *Limiter) Acquire(ctx context.Context) (Permit, error) {
	if !l.enabled {
		return Permit{}, decorate.ContextErr(ctx)
	}
	return l.acquire(ctx)
}

// acquire lets a call with ctx in, after the arrival check: a nil or done ctx takes
// nothing and publishes nothing. It records the call's outcome.
func (l *Limiter) acquire(ctx context.Context) (Permit, error) {
	if err := decorate.ContextErr(ctx); err != nil {
		return Permit{}, l.sw.Refuse(ctx, err)
	}
	if p, ok := l.tryAcquire(); ok {
		l.sw.Admit(ctx)
		return p, nil
	}
	if l.maxWait == 0 {
		l.sw.Reject(ctx, 0, l.rej.Plain)
		return Permit{}, l.rej.Plain
	}
	r, err := l.sw.Wait(ctx)
	if err != nil {
		return Permit{}, err
	}
	return l.permit(r), nil
}

// tryAcquire lets a call in if it fits and nobody waits (no barging), and starts its
// permit's clock.
func (l *Limiter) tryAcquire() (Permit, bool) {
	if l.queued.Load() != 0 {
		return Permit{}, false
	}
	ticket, n, ok := l.take()
	if !ok {
		return Permit{}, false
	}
	return Permit{l: l, start: l.now(), ticket: ticket, inFlight: n}, true
}

// take counts a call in if the calls in flight are below the limit, and returns its
// ticket (the admission counter after it) and the calls in flight with it.
func (l *Limiter) take() (ticket, inFlight uint32, ok bool) {
	for {
		w := l.word.Load()
		n := uint32(w)
		if int64(n) >= l.limit.Load() {
			return 0, 0, false
		}
		next := w + 1<<32 + 1 // the counter wraps; in flight never reaches 2³²
		if l.word.CompareAndSwap(w, next) {
			return uint32(next >> 32), n + 1, true
		}
	}
}

// free counts a call out. An extra Release finds no call in flight and does nothing.
func (l *Limiter) free() {
	for {
		w := l.word.Load()
		if uint32(w) == 0 {
			return
		}
		if l.word.CompareAndSwap(w, w-1) {
			return
		}
	}
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
	case matches(err, l.cfg.IgnoreOn):
		return ignored
	case errors.Is(err, context.DeadlineExceeded), matches(err, l.cfg.DropOn):
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

func matches(err error, list []error) bool {
	for _, e := range list {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// complete gives back p's room, records its sample unless o is ignored, and lets
// waiters in; ctx is the context of the call that completes, which an
// EventChanged event its sample causes carries. A waiter enqueued concurrently is
// not missed: it raises queued before it looks for room (recheck), and complete frees
// the room (or raises the limit) before it reads queued, so at least one of them sees the
// other.
func (l *Limiter) complete(ctx context.Context, p Permit, o outcome) {
	var end time.Duration
	if o != ignored {
		end = l.now()
	}
	l.free()
	if o != ignored {
		l.record(ctx, p, sat.Left(end, p.start), o == dropped)
	}
	if l.queued.Load() != 0 {
		l.q.Dispatch()
	}
}

// record adds the sample of the call with ctx let in with p to the round, and ends the
// round when it is over; an EventChanged it publishes carries ctx. A call let in
// before the limit last changed says nothing of the limit now: its sample is left out. A
// round is over with the first sample of a call let in after it began (a round spans at
// least one call's latency) once it holds half as many samples as the most calls that
// were in flight with one of them.
func (l *Limiter) record(ctx context.Context, p Permit, latency time.Duration, drop bool) {
	if !after(l.counter(), p.ticket, l.epoch.Load()) {
		return
	}
	drop = drop || latency > l.slow
	l.amu.Lock()
	defer l.amu.Unlock()
	now := l.counter()
	if !after(now, p.ticket, l.epoch.Load()) { // the limit changed meanwhile
		return
	}
	l.age(now)
	r := &l.cur
	r.add(latency, int(p.inFlight), drop)
	if !after(now, p.ticket, l.roundStart) || 2*r.n < r.maxInFlight {
		return
	}
	prev := l.limit.Load()
	if v := l.algo.next(l.value, r); v == v { // not NaN
		l.value = max(l.minLim, min(l.maxLim, v))
	}
	l.latency.Store(int64(r.mean()))
	l.baseline.Store(int64(l.algo.baseline()))
	*r = round{}
	next := int64(l.value)
	if next == prev {
		l.roundStart = l.counter()
		return
	}
	// Stored before the counter is read: a call counted after it was let in under the
	// new limit, and one let in under it but counted before is merely left out.
	l.limit.Store(next)
	counter := l.counter()
	l.epoch.Store(counter)
	l.roundStart = counter
	l.events.PublishCtx(ctx, policy.Event{Kind: EventChanged, Attrs: policy.EventAttrs{
		slog.Int(attrLimit, int(next)), slog.Int(attrPreviousLimit, int(prev))}})
}

// counter returns the admission counter now: the ticket of the last call let in. It wraps
// at 2³².
func (l *Limiter) counter() uint32 { return uint32(l.word.Load() >> 32) }

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

// An admission is what letting a call in yields: its ticket (the admission counter after
// it) and the calls in flight with it.
type admission struct{ ticket, inFlight uint32 }

// room lets a waiter in if it fits under the limit: the queue's step.
func (l *Limiter) room() (admission, bool) {
	ticket, n, ok := l.take()
	return admission{ticket, n}, ok
}

// recheck lets the queue in if room came while a waiter was being queued (see complete).
func (l *Limiter) recheck() {
	if int64(uint32(l.word.Load())) < l.limit.Load() {
		l.q.Dispatch()
	}
}

// permit returns the permit of a waiter let in with r, its clock started now.
func (l *Limiter) permit(r admission) Permit {
	return Permit{l: l, start: l.now(), ticket: r.ticket, inFlight: r.inFlight}
}

// giveBack gives back, without a sample, the room r of a waiter let in whose wait was
// already over (canceled, expired, or ctx ended as the room came).
func (l *Limiter) giveBack(r admission) {
	l.complete(context.Background(), Permit{l: l, ticket: r.ticket, inFlight: r.inFlight}, ignored)
}
