package ratelimit

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/kind"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
)

const maxInt64 = 1<<63 - 1

// Limiter is a GCRA rate limiter. It is safe for concurrent use. Its configuration can
// change while it runs (Reconfigure): each call reads it once, whole. With a Backend
// (WithBackend), each call asks the backend's Store instead of the in-process schedule: one
// round trip, with the allocations of the backend's client; rejections are still the
// limiter's own preallocated errors.
type Limiter struct {
	// Read-only after New, but rate, which Reconfigure replaces whole.
	rate    atomic.Pointer[rate] // the configuration in force; nil for a zero Limiter
	system  bool                 // the clock is clock.System(): read it without an interface call
	perKey  bool                 // the shared part of a Keyed limiter: its rejections name no schedule
	clk     clock.Clock
	events  kind.Events     // the instance id, the clock, the listener and the recorder
	relay   policy.Listener // what a Backend's stores publish through (storeListener)
	rej     policy.Rejections[*ExceededError]
	nilCtx  *ExceededError // the rejection of a call with a nil context
	backend Backend        // nil: the state is the in-process schedule below
	store   Store          // the backend's state of this limiter; nil without a backend
	share   int            // the backend's LocalShare: the in-process rate is 1/share of the quota
	mu      sync.Mutex     // serializes Reconfigure
	// retryAt is, with a backend, the clock time at which the store said, at its last
	// refusal, that the next permit is free: what the limiter's rejections report.
	retryAt atomic.Int64
	// waiting counts the calls that hold a reserved permit and wait for its time (Snapshot's
	// Waiting); touched on the waiting paths only.
	waiting atomic.Int64

	_     [64]byte // a whole 64-byte cache line: the schedule never shares one with the fields above
	slots slots    // the TAT and the freed slots (RL-1, RL-9)
	_     [48]byte // 64-byte cache line - 16 bytes of slots
}

// New builds a limiter from opts. Permits and Period are required. An invalid
// configuration returns a *policy.ConfigError: R4C-ATR-003 (permits < 1), R4C-ATR-002
// (period ≤ 0), R4C-REG-001 (period shorter than 1ns per permit), R4C-ATR-004
// (maxWait < 0). The instance id is WithInstanceID's, else the Name, else "ratelimiter".
func New(opts ...Option) (*Limiter, error) { return kind.New(defaults, build, opts) }

func build(s settings) (*Limiter, error) {
	if err := s.Config.validate(s.given); err != nil {
		return nil, err
	}
	id := s.ID("ratelimiter")
	clk := s.ClockOrSystem()
	l := &Limiter{
		system: clock.IsSystem(clk),
		clk:    clk,
		events: s.EventsOf(Layer, id),
		nilCtx: newExceeded(id, policy.ErrNilContext),
	}
	l.rej = policy.NewRejections(func(cause error) *ExceededError {
		e := newExceeded(id, cause)
		e.src = l
		return e
	})
	l.nilCtx.src = l
	l.relay = l.storeListener()
	if err := l.bind(s.backend, s.Config); err != nil {
		return nil, err
	}
	// TAT 0 (the clock's origin, at or before now): the full burst is free (RL-3).
	l.rate.Store(l.newRate(s.Config))
	return l, nil
}

// mode is how a limiter that is not direct takes permits: disabled (every call passes and
// nothing changes), backed (its Backend's Store decides) or unbuilt (a zero Limiter). The
// rate picks it, so that the methods of an enabled in-process limiter test one flag and
// then run GCRA on its schedule. n is the number of permits, 1..Permits.
//
// Each method reports what it decides as the limiter's methods do (see admitted and
// reject), with ctx, the call's context (context.Background() for the methods that have
// none), except reserve, which leaves an admission to its caller.
type mode interface {
	tryAcquire(l *Limiter, r *rate, n int) error
	acquire(ctx context.Context, l *Limiter, r *rate, n int) error
	reserve(ctx context.Context, l *Limiter, r *rate, n int) (Reservation, error)
	available(l *Limiter, r *rate) int
}

// cur returns the configuration in force: l's rate, or unbuiltRate for a zero Limiter.
func (l *Limiter) cur() *rate {
	if r := l.rate.Load(); r != nil {
		return r
	}
	return &unbuiltRate
}

// disabled is the mode of a limiter that is not enabled: every call passes and nothing
// changes.
type disabled struct{}

func (disabled) tryAcquire(*Limiter, *rate, int) error { return nil }
func (disabled) acquire(ctx context.Context, _ *Limiter, _ *rate, _ int) error {
	return policy.ContextErr(ctx)
}
func (disabled) reserve(context.Context, *Limiter, *rate, int) (Reservation, error) {
	return Reservation{ok: true}, nil
}
func (disabled) available(_ *Limiter, r *rate) int { return r.cfg.Permits }

// unbuilt is the mode of a zero Limiter, never built with New: it admits nothing.
type unbuilt struct{}

func (unbuilt) tryAcquire(*Limiter, *rate, int) error               { return errZero }
func (unbuilt) acquire(context.Context, *Limiter, *rate, int) error { return errZero }
func (unbuilt) reserve(context.Context, *Limiter, *rate, int) (Reservation, error) {
	return Reservation{}, errZero
}
func (unbuilt) available(*Limiter, *rate) int { return 0 }

// unbuiltRate is the rate of a zero Limiter: it admits nothing.
var unbuiltRate = rate{other: unbuilt{}}

// built reports whether l was built with New: a zero Limiter has no clock.
func (l *Limiter) built() bool { return l.clk != nil }

// offErr is the result of a call through a limiter that is not enabled: nil when it is
// disabled, the zero Limiter's rejection when it was never built.
func (l *Limiter) offErr() error {
	if !l.built() {
		return errZero
	}
	return nil
}

// now reads the clock once (SPEC RL-12).
func (l *Limiter) now() int64 {
	if l.system {
		return int64(clock.Mono())
	}
	return int64(l.clk.Now())
}

// gcraReserve is GCRA on one TAT, for emission interval T and burst tolerance
// tau = (Permits-1)·T. At clock time now the next permit is free after
// wait = max(TAT, now) - now - tau (≤ 0: free now). A call that would wait longer than
// maxWait is refused without changing anything; otherwise the TAT moves forward by T.
// It returns the TAT before and after, and the wait (clamped at 0 when reserved).
//
// A TAT past the largest time.Duration (a period or maxWait of about 292 years from the
// clock's origin) cannot be represented: the call that would move the TAT past it is
// admitted (its own permit time is exact) and leaves the TAT at the largest value, which
// then refuses every call, with that largest value as the retry-after, until the
// cancellation of that call. So no permit is ever given twice (RL-5, RL-9).
//
// The dead TAT of an evicted Keyed cell (deadTAT) refuses too, with prev = deadTAT: the
// caller looks the key up again.
func gcraReserve(tat *atomic.Int64, interval, tau, now, maxWait int64) (prev, next, wait int64, ok bool) {
	for spins := 0; ; spins++ {
		prev = tat.Load()
		// prev is maxInt64 or deadTAT (minInt64) — one unsigned comparison, as the two
		// are adjacent as uint64: the hot path costs what a check of maxInt64 alone did.
		if uint64(prev)-maxInt64 <= 1 {
			return prev, prev, maxInt64, false
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
		// Lost the race to another call (RL-13): retry at once, yielding the processor
		// now and then so that the winner's core can make progress. A call admitted on a
		// retry counts at the clock reading it started with; that reading is at most the
		// time of the CAS, so a call is never admitted earlier than GCRA allows.
		if spins&3 == 3 {
			runtime.Gosched()
		}
	}
}

// TryAcquire takes a permit that is free now and reports whether it did; it never waits,
// whatever MaxWait is. A refusal publishes an EventRejected event. Its outcome is
// recorded with context.Background(): ResultAdmitted (Wait 0) or ResultRejected. It never
// allocates. A disabled limiter always returns true; a zero Limiter, never built, false.
func (l *Limiter) TryAcquire() bool {
	r := l.rate.Load()
	if r == nil || !r.direct {
		r = l.cur()
		return r.other.tryAcquire(l, r, 1) == nil
	}
	// The clock read and the schedule's take, inlined: this is the hottest path.
	var now int64
	if l.system {
		now = int64(clock.Mono())
	} else {
		now = int64(l.clk.Now())
	}
	var wait int64
	var ok bool
	if l.slots.none() {
		_, _, wait, ok = gcraReserve(&l.slots.tat, r.interval, r.tau, now, 0)
	} else {
		_, _, wait, ok = l.slots.takeFreed(now, r.interval, r.tau, 0)
	}
	if !ok {
		l.reject(context.Background(), now, wait, l.rej.Plain)
		return false
	}
	l.admitted(context.Background(), 0)
	return true
}

// TryAcquireN takes n permits that are free now, all of them or none, and never waits,
// whatever MaxWait is. It returns nil when they are the caller's, or:
//   - the limiter's rejection, matching ErrExceeded, when they are not all free now;
//   - a *BurstError matching ErrExceedsBurst (and not ErrExceeded), when n is more than
//     Permits: such a call can never pass, and takes nothing;
//   - a *policy.ConfigError with code R4C-ATR-003 when n < 1.
//
// n = Permits passes on a full bucket. A refusal publishes an EventRejected event.
// Its outcome is recorded as TryAcquire's, a *BurstError as a ResultRejected (n < 1 is no
// decision: nothing is recorded). It never allocates. A disabled limiter lets every n
// from 1 to Permits pass; a zero Limiter, never built, refuses every call.
func (l *Limiter) TryAcquireN(n int) error {
	r := l.cur()
	if err := r.check(n); err != nil {
		return l.refuseCount(context.Background(), err)
	}
	if !r.direct {
		return r.other.tryAcquire(l, r, n)
	}
	now := l.now()
	inc, tol := r.weight(n)
	if _, _, wait, ok := l.slots.take(now, inc, tol, 0); !ok {
		l.reject(context.Background(), now, wait, l.rej.Plain)
		return l.rej.Plain
	}
	l.admitted(context.Background(), 0)
	return nil
}

// refuseCount publishes and records the refusal of the call with ctx for a number of
// permits that can never be granted (err is rate.check's), and returns err. n < 1 is not
// a decision: it is neither published nor recorded.
func (l *Limiter) refuseCount(ctx context.Context, err error) error {
	if err != errBadCount {
		l.reject(ctx, l.eventTime(), 0, err)
	}
	return err
}

// Acquire takes a permit, waiting for it on the caller's goroutine through the clock when
// it comes within MaxWait. MaxWait bounds the wait even when ctx would allow more: with
// the default MaxWait of 0, Acquire never waits; with MaxWait(math.MaxInt64) it waits as
// long as ctx allows. It returns nil once the permit is the caller's, or the limiter's
// rejection, which matches ErrExceeded:
//   - at once, without reserving, when no permit comes within MaxWait;
//   - at once, without reserving, when ctx is nil (the error also matches
//     policy.ErrNilContext), already done, or its deadline comes before the permit would
//     (the error also matches ctx's error);
//   - when ctx ends during the wait: the permit is given back as Reservation.Cancel gives
//     it, and the error also matches ctx's error.
//
// A wait publishes an EventWaited event, a rejection an EventRejected event
// (with the retry-after, when known), except the refusal of a call whose ctx is nil or
// already done when it arrives, which publishes nothing. Events go out with ctx. The
// outcome is recorded once, with ctx, when it is known: ResultAdmitted once the permit is
// the caller's (Wait = the wait it reserved, 0 when none), or ResultRejected, also for a
// nil or done ctx on arrival (a nil ctx is recorded as context.Background()). Acquire
// allocates nothing unless it has to wait. With MaxWait > 0 and a ctx that has a
// deadline, it reads the real time left once more (with a manual clock, the virtual wait
// is compared with that real time). A disabled limiter returns nil at once, but for a nil
// or done ctx, whose error it returns as is; a zero Limiter, never built, a rejection
// matching ErrExceeded.
func (l *Limiter) Acquire(ctx context.Context) error { return l.acquire(ctx, l.cur(), 1) }

// AcquireN is Acquire for n permits, taken together: the call waits until all n are free,
// within MaxWait and ctx, and a call whose ctx ends during the wait gives all n back. A
// call for more than Permits fails at once with a *BurstError matching ErrExceedsBurst
// (and not ErrExceeded), taking nothing; n < 1 with a *policy.ConfigError, code
// R4C-ATR-003. Events, outcomes and allocations are Acquire's (a *BurstError is recorded
// as a ResultRejected; n < 1 is not recorded).
func (l *Limiter) AcquireN(ctx context.Context, n int) error {
	r := l.cur()
	if err := r.check(n); err != nil {
		return l.refuseCount(ctx, err)
	}
	return l.acquire(ctx, r, n)
}

func (l *Limiter) acquire(ctx context.Context, r *rate, n int) error {
	if !r.direct {
		if ctx == nil && !r.cfg.Disabled && l.built() { // with a backend: refused before its store is asked
			return l.refuseOnArrival(ctx, policy.ErrNilContext)
		}
		return r.other.acquire(ctx, l, r, n)
	}
	if err := policy.ContextErr(ctx); err != nil {
		return l.refuseOnArrival(ctx, err)
	}
	now := l.now()
	prev, next, wait, err := l.reserveCtx(ctx, r, n, now)
	if err != nil {
		return err
	}
	if wait == 0 {
		l.admitted(ctx, 0)
		return nil
	}
	return l.sleep(ctx, prev, next, now, wait)
}

// sleep waits wait from now for the permit the call with ctx reserved (the TAT moved
// from prev to next), and gives it back if ctx ends first. Apart from acquire, so that
// the calls that do not wait run no code of it.
func (l *Limiter) sleep(ctx context.Context, prev, next, now, wait int64) error {
	l.publishWaited(ctx, now, wait)
	l.waiting.Add(1)
	err := l.clk.Sleep(ctx, time.Duration(wait))
	l.waiting.Add(-1)
	if err != nil {
		Reservation{l: l, prev: prev, next: next, at: sat.Add(now, wait), ok: true}.Cancel()
		return l.rejectContext(ctx, l.now(), 0, err)
	}
	l.admitted(ctx, wait)
	return nil
}

// reserveCtx takes n permits within MaxWait and, when ctx has a deadline, before it: a
// permit that would come after the deadline is useless, and is refused unreserved (SPEC
// RL-8). A refusal is published and recorded, and returned as the rejection to give: the
// limiter's plain one, or the one that also matches context.DeadlineExceeded. A permit
// reserved is not recorded: the caller records it once the call is let through. With
// MaxWait > 0 and a deadline, it reads the real time left: with a manual clock, the
// virtual wait is compared with the real time left before the deadline.
func (l *Limiter) reserveCtx(ctx context.Context, r *rate, n int, now int64) (prev, next, wait int64, err error) {
	limit, byDeadline := waitLimit(ctx, r.maxWait)
	inc, tol := r.weight(n)
	var ok bool
	if l.slots.none() { // take, inlined: Acquire's path
		prev, next, wait, ok = gcraReserve(&l.slots.tat, inc, tol, now, limit)
	} else {
		prev, next, wait, ok = l.slots.takeFreed(now, inc, tol, limit)
	}
	switch {
	case ok:
		return prev, next, wait, nil
	case afterDeadline(wait, limit, byDeadline, r.maxWait):
		return prev, next, wait, l.rejectContext(ctx, now, wait, context.DeadlineExceeded)
	}
	l.reject(ctx, now, wait, l.rej.Plain)
	return prev, next, wait, l.rej.Plain
}

// afterDeadline reports whether a refusal whose retry-after is wait is the deadline's: the
// call could wait only until its deadline (byDeadline, with limit the time left, from
// waitLimit) and its permit comes after that, within maxWait. Such a refusal matches
// context.DeadlineExceeded (RL-8); one with a sooner retry-after (a backend's store that
// fails closed, say) does not.
func afterDeadline(wait, limit int64, byDeadline bool, maxWait int64) bool {
	return byDeadline && wait > limit && wait <= maxWait
}

// waitLimit is how long a call with ctx may wait for its permit: maxWait, or less when
// ctx's deadline comes first (byDeadline). The time left is read on the real clock
// (time.Until, which saturates), and never below 0.
func waitLimit(ctx context.Context, maxWait int64) (limit int64, byDeadline bool) {
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

// Reserve takes the next permit if it comes within MaxWait, without waiting for it, and
// returns its Reservation: wait Delay() before the call, or Cancel() it to give the permit
// back. When the permit does not come within MaxWait, nothing is reserved and Reserve
// returns the limiter's rejection (matching ErrExceeded) together with a refused
// Reservation whose Delay() is the time until the next permit is free: the retry-after.
// A delayed reservation publishes EventWaited, a refusal EventRejected. Its
// outcome is recorded with context.Background() when it is made: ResultAdmitted with
// Wait = Delay(), or ResultRejected (a later Cancel records nothing). Reserve never
// allocates. A disabled limiter returns a reservation with no delay; a zero Limiter,
// never built, a refused Reservation and a rejection matching ErrExceeded.
func (l *Limiter) Reserve() (Reservation, error) { return l.reserveOne(l.cur(), 1) }

// ReserveN is Reserve for n permits, taken together: its Delay is how long until all n
// are free, and Cancel gives all n back. A refused ReserveN's Delay is how long until n
// permits are free. A call for more than Permits fails at once with a refused Reservation
// (Delay 0) and a *BurstError matching ErrExceedsBurst (and not ErrExceeded), taking
// nothing; n < 1 with a *policy.ConfigError, code R4C-ATR-003. Events, outcomes and
// allocations are Reserve's (a *BurstError is recorded as a ResultRejected; n < 1 is not
// recorded).
func (l *Limiter) ReserveN(n int) (Reservation, error) {
	r := l.cur()
	if err := r.check(n); err != nil {
		return Reservation{}, l.refuseCount(context.Background(), err)
	}
	return l.reserveOne(r, n)
}

// reserveOne is Reserve and ReserveN: reserve, and the admission recorded.
func (l *Limiter) reserveOne(r *rate, n int) (Reservation, error) {
	res, err := l.reserve(context.Background(), r, n)
	if l.events.Rec != nil && err == nil && !r.cfg.Disabled {
		l.admitted(context.Background(), int64(res.delay))
	}
	return res, err
}

// reserve takes n permits within MaxWait for the call with ctx, without waiting for
// them. Its events go out with ctx, and a refusal is recorded; a permit reserved is not:
// the caller records it.
func (l *Limiter) reserve(ctx context.Context, r *rate, n int) (Reservation, error) {
	if !r.direct {
		return r.other.reserve(ctx, l, r, n)
	}
	now := l.now()
	inc, tol := r.weight(n)
	prev, next, wait, ok := l.slots.take(now, inc, tol, r.maxWait)
	if !ok {
		l.reject(ctx, now, wait, l.rej.Plain)
		return Reservation{delay: time.Duration(wait)}, l.rej.Plain
	}
	if wait > 0 {
		l.publishWaited(ctx, now, wait)
	}
	return Reservation{l: l, prev: prev, next: next, at: sat.Add(now, wait), delay: time.Duration(wait), ok: true}, nil
}

// Rejection returns the limiter's one rejection error, for callers that use TryAcquire
// and need an error to return. It matches ErrExceeded and is made once, when the limiter
// is built: returning it allocates nothing.
func (l *Limiter) Rejection() error {
	if !l.built() {
		return errZero
	}
	return l.rej.Plain
}

// Clock returns the limiter's time source.
func (l *Limiter) Clock() clock.Clock { return l.clk }

// refuseOnArrival is the rejection of a call whose context ctx is nil or already done when
// it arrives (err is policy.ContextErr's): it matches ErrExceeded and err. Nothing is
// taken and no event is published; the rejection is recorded.
func (l *Limiter) refuseOnArrival(ctx context.Context, err error) error {
	rej := l.nilCtx
	if err != policy.ErrNilContext {
		rej = l.rej.ForContext(err)
	}
	l.rejected(ctx, rej)
	return rej
}

// rejectContext publishes, records and returns the rejection of the call with ctx that
// its context ended after it arrived: its deadline comes before the permit (wait is then
// the retry-after), or it ended during the wait.
func (l *Limiter) rejectContext(ctx context.Context, now, wait int64, ctxErr error) error {
	err := l.rej.ForContext(ctxErr)
	l.reject(ctx, now, wait, err)
	return err
}

// publishWaited publishes the wait, from now, of the call with ctx.
func (l *Limiter) publishWaited(ctx context.Context, now, wait int64) {
	if l.events.Observed() {
		l.events.PublishCtx(ctx, policy.Event{Kind: EventWaited,
			At: time.Duration(now), Wait: time.Duration(wait)})
	}
}

// reject publishes the refusal at now, with err, of the call with ctx, whose retry-after
// is retryAfter (≤ 0: none known), and records it.
func (l *Limiter) reject(ctx context.Context, now, retryAfter int64, err error) {
	if l.events.Observed() { // inlined: a limiter nobody observes makes no call here
		l.rejectObserved(ctx, now, retryAfter, err)
	}
}

// rejectObserved is reject with a listener or a recorder.
func (l *Limiter) rejectObserved(ctx context.Context, now, retryAfter int64, err error) {
	ctx = orBackground(ctx)
	if l.events.Wants(ctx, EventRejected) {
		l.events.PublishCtx(ctx, policy.Event{Kind: EventRejected,
			At: time.Duration(now), RetryAfter: time.Duration(max(retryAfter, 0)), Err: err})
	}
	l.rejected(ctx, err)
}

// admitted records, if outcomes are recorded, that the call with ctx was let through
// after waiting wait nanoseconds (0: it did not wait).
func (l *Limiter) admitted(ctx context.Context, wait int64) {
	if l.events.Rec != nil {
		l.events.Rec.Record(ctx, policy.Outcome{Result: policy.ResultAdmitted, Wait: time.Duration(wait)})
	}
}

// rejected records, if outcomes are recorded, the refusal err of the call with ctx (nil:
// context.Background()).
func (l *Limiter) rejected(ctx context.Context, err error) {
	if l.events.Rec != nil {
		l.events.Rec.Record(orBackground(ctx), policy.Outcome{Result: policy.ResultRejected, Err: err})
	}
}

// orBackground returns ctx, or context.Background() for a nil ctx: what a recorder is
// given for a call that came without a context.
func orBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}
