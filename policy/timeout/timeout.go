// Package timeout is resilience4go's timeout policy (layer timeout.Layer): a call
// that runs longer than its Duration fails with ErrTimeout.
//
// Use it to bound how long a call may take on a dependency that can hang (a service that
// stops answering, a connection that stalls, a query that runs away): the function's
// context ends at the deadline, and the call fails with ErrTimeout. Go cannot stop a
// goroutine from outside, so the function must honour its context for the timeout to cut
// it short. Build a timeout with New and bound a function with NewPolicy, or let a
// registry build it, composed with other policies, with resilience.Wrap:
//
//	t, err := timeout.New(2 * time.Second)
//	get := timeout.NewPolicy[Stock](t).Decorate(fetchStock)
//
//	get, err := resilience.Wrap(reg, "Inventory.Get", fetchStock, resilience.Timeout(2*time.Second))
//
// Where the detail is:
//   - NewPolicy: how a synchronous call and a call that returns a future are bounded,
//     and what a recorder is told;
//   - Error and ErrTimeout: the error of a call that timed out;
//   - EventExceeded: the event;
//   - Layer: which waits count against the deadline in a composition;
//   - New (the defaults), Config (what a reload changes on a running timeout) and the
//     options.
package timeout

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/internal/sysclock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// Timeout bounds how long calls may run. Build it with New and bound calls with
// NewPolicy (a registry builds its own for resilience.Timeout). It is safe for
// concurrent use. Its configuration
// can change while it runs (a registry's reload): each call is bounded by the configuration in
// force when it starts. It holds no per-call state: every call has its own deadline.
type Timeout struct {
	system bool // the clock is clock.System(): let the runtime's context timer do the work
	clk    clock.Clock
	events contract.Events
	cur    atomic.Pointer[limit] // the configuration in force, replaced whole by reconfigure
	mu     sync.Mutex            // serializes reconfigure
}

// limit is a configuration in force. It is read-only once stored: the calls that start
// under it keep it to their end.
type limit struct {
	cfg   Config
	err   *Error   // the error of the calls that run past cfg.Duration
	final error    // err, for a call whose function's error is never to be retried
	t     *Timeout // the timeout it is in force for
}

// New builds a timeout of d (positive) with opts. Defaults: Enabled true; Duration has no
// default and must be positive. An invalid configuration returns a
// *policy.ConfigError: R4C-ATR-004 (d < 0) or R4C-ATR-007 (d == 0). The instance id is
// the Name, else "" (no id: its errors and events name no instance).
func New(d time.Duration, opts ...Option) (*Timeout, error) {
	return contract.New(defaults, build, append([]Option{Duration(d)}, opts...))
}

func build(s settings) (*Timeout, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	id := s.ID("")
	clk := s.ClockOrSystem()
	t := &Timeout{
		system: sysclock.Is(clk),
		clk:    clk,
		events: s.EventsOf(Layer, id),
	}
	l := &limit{cfg: s.Config, t: t}
	l.err, l.final = newTimeoutErrors(id, s.Duration)
	t.cur.Store(l)
	return t, nil
}

// Config returns the configuration in force: the one the timeout was built with, or the
// last one a registry's reload applied.
func (t *Timeout) Config() Config { return t.cur.Load().cfg }

// reconfigure applies c to the running timeout, for a registry's reload, for the calls
// that start after it returns; calls already running keep the Duration (and the error)
// they started with. Both settings change live: Duration, and Disabled (a call that
// starts while the timeout is disabled runs without a deadline). c is validated as New
// validates it: an invalid c returns the same *policy.ConfigError and changes nothing.
// When c differs from the configuration in force, a ConfigChanged event is published,
// whose Changed lists the attributes that changed, sorted; when it is equal, nothing is
// published. It is safe for concurrent use, with calls and with other reconfigures
// (which apply one after the other). The event listener must not reload the registry.
func (t *Timeout) reconfigure(c Config) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.cur.Load()
	changed, err := changes(old.cfg, c)
	if err != nil || len(changed) == 0 {
		return err
	}
	l := &limit{cfg: c, err: old.err, final: old.final, t: t}
	if c.Duration != old.cfg.Duration {
		l.err, l.final = newTimeoutErrors(t.events.ID, c.Duration)
	}
	t.cur.Store(l)
	t.events.Publish(policy.Event{Kind: policy.ConfigChanged, Changed: changed})
	return nil
}

// checkReconfigure reports the error reconfigure would return for c, without applying
// it: nil, or the *policy.ConfigError of an invalid c. Every setting of a timeout can
// change live, so it never returns R4C-REG-012. Safe for concurrent use.
func (t *Timeout) checkReconfigure(c Config) error {
	return contract.ErrOf(changes(t.cur.Load().cfg, c))
}

// changes validates c and returns the attribute names of the settings in which it
// differs from old, sorted.
func changes(old, c Config) ([]string, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	return contract.ChangedAttrs(attrs, &settings{Config: old}, &settings{Config: c}), nil
}

// NewPolicy returns t as a policy of layer Layer, for calls returning T: its Decorate
// guards a function that returns (T, error), its DecorateAsync one that returns a future.
// Below, next is that function and ctx the context of a call.
//
// Its Decorate returns next bounded by t. Each call runs next on the caller's goroutine
// (no goroutine is started per call) with a context derived from ctx that ends at the
// deadline, Duration from now on t's clock (the Duration in force when the call starts: a
// reload during the call does not move its deadline):
//   - next returns before the deadline: its result is returned as is, and the deadline's
//     timer is stopped at once;
//   - the deadline passes first: the call returns the zero T and t's *Error
//     (matching ErrTimeout and context.DeadlineExceeded), whatever next returned, even a
//     success, and a EventExceeded event is published when next returns (its attribute
//     "timeout" = Duration). The context next ran under reports Err() ==
//     context.DeadlineExceeded (exactly, as the standard library's deadlines do) and
//     context.Cause == the *Error. When next's error says that no retry may retry the
//     call (policy.NeverRetried), the error says so too (see Error).
//
// The caller waits for next to return in every case: Go cannot stop a goroutine from
// outside, so next must honour its context for the timeout to cut it short. A next that
// ignores its context delays the caller past the deadline (no goroutine is abandoned) and
// then gets ErrTimeout all the same. A deadline of ctx earlier than t's ends next's
// context first; next's own result (typically ctx's error) is then returned as is. A call
// that returns exactly at its deadline may be reported either way. A ctx that is nil or
// already done when the call arrives does not run next and publishes nothing: the call
// returns ctx's error (policy.ErrNilContext for a nil ctx) as is.
//
// With a recorder (a registry's observer, resilience.WithObserver), each call's outcome is
// recorded once, with ctx, when the call ends: observe.ResultSucceeded (a nil error) or
// observe.ResultFailed (an error, Err) when it ended in time, observe.ResultTimedOut (Err
// the *Error) when it ran past its deadline; Latency is the time from its start to its
// end on t's clock (for a synchronous call that ran past its deadline, until next
// returned). The clock is read for the latency only when there is a recorder. A call
// refused on arrival because its ctx was nil or done, and a call that starts while t is
// disabled, are not recorded. The EventExceeded event is published with ctx.
//
// Each call allocates its context and timer (as context.WithTimeout does); nothing else,
// with or without a recorder. A call that starts while t is disabled runs next as is,
// without a deadline, but for a nil or done ctx, whose error it returns as is.
//
// Its DecorateAsync returns next bounded by t, for calls that return a future. Each call
// starts next at once, with a context derived from ctx that ends at the deadline,
// Duration from now on t's clock (the Duration in force when the call starts: a
// reload during the call does not move its deadline), and returns a future that:
//   - completes with next's result if next's future completes before the deadline; the
//     deadline's timer is then stopped at once (a manual clock's PendingTasks drops);
//   - fails with t's *Error (matching ErrTimeout and context.DeadlineExceeded) at
//     the deadline, fired by a clock timer: no goroutine waits for it. next's context
//     then ends (its Err() is context.DeadlineExceeded, its cause the *Error),
//     next's future is canceled, and an EventExceeded event is published (its attribute
//     "timeout" = Duration).
//
// Contexts that next derives from its context see context.Canceled when the deadline
// ends them (their cause is the *Error); next's context itself reports
// DeadlineExceeded.
//
// A ctx that is nil or already done when the call arrives does not run next and
// publishes nothing: the future fails with ctx's error (policy.ErrNilContext for a nil
// ctx). A nil future returned by next counts as one failed with async.ErrNilFuture: the
// returned future fails with it.
//
// With a recorder, each call is recorded once, with ctx, when the returned future
// completes, as above (ResultSucceeded, ResultFailed, ResultTimedOut, with Latency from
// the call's start to the future's completion), and the EventExceeded event is published
// with ctx. A call ended by Cancel on its future is recorded as observe.ResultFailed with
// async.ErrCanceled.
//
// Cancelling the returned future stops the timer, ends next's context and cancels next's
// future; Cancel reports what that inner Cancel reports (true only if next's work had not
// started, e.g. it was still queued in a bulkhead). Whichever comes first of Cancel,
// next's result and the deadline is the call's end, and only it is recorded and
// published: a Cancel that comes first is recorded as ResultFailed with
// async.ErrCanceled, and a result or deadline arriving during it records nothing; once
// next's result or the deadline has begun ending the call, Cancel returns false and
// changes nothing. A call that starts while t is disabled gets next's own future, without
// a deadline (a nil one is a future failed with async.ErrNilFuture), but for a nil or
// done ctx, whose error it returns as is.
func NewPolicy[T any](t *Timeout) policy.Policy[T] {
	return decorate.Of(Layer, t, decorateFunc[struct{}, T], decorateAsyncFunc[struct{}, T])
}

// Decorate is the timeout's layer as package resilience composes it: it bounds next, a
// function of any arity (its arguments carried as A) and result T, synchronous or
// returning a future, as NewPolicy's Decorate and DecorateAsync bound a function without
// argument. Its type argument F is one of this module's own function types, which code
// outside the module cannot name, so it is not for calling directly: bound a function
// with NewPolicy[T](t).Decorate (or DecorateAsync), or wrap it with resilience.Wrap and a
// resilience.Timeout spec.
func Decorate[F decorate.Func[A, T] | decorate.AsyncFunc[A, T], A, T any](t *Timeout, next F) F {
	return decorate.Dispatch(t, next, decorateFunc[A, T], decorateAsyncFunc[A, T])
}

// decorateFunc is Decorate for a decorate.Func: see NewPolicy.
func decorateFunc[A, T any](t *Timeout, next decorate.Func[A, T]) decorate.Func[A, T] {
	return func(ctx context.Context, a A) (T, error) {
		if err := decorate.ContextErr(ctx); err != nil {
			var zero T
			return zero, err
		}
		l := t.cur.Load()
		if l.cfg.Disabled {
			return next(ctx, a)
		}
		var start time.Duration
		if t.events.Timed {
			start = t.now()
		}
		cctx, d := t.bound(ctx, l)
		defer d.release() // also when next panics: its timer and its parent's hook go
		v, err := next(cctx, a)
		if context.Cause(cctx) == error(l.err) {
			return timedOut[T](ctx, l, err, start)
		}
		if t.events.Rec != nil {
			t.record(ctx, ended(err), start, err)
		}
		return v, err
	}
}

// bound returns the context of a synchronous call that starts now under l, which its
// deadline ends Duration from now with l's *Error as the cause, and what releases
// it once the call is over: on clock.System() the runtime's own timer context, on any
// other clock a clockCtx under a timer of that clock.
func (t *Timeout) bound(ctx context.Context, l *limit) (context.Context, deadline) {
	if t.system {
		cctx, cancel := context.WithTimeoutCause(ctx, l.cfg.Duration, l.err)
		return cctx, deadline{cancel: cancel}
	}
	c := newClockCtx(ctx, l)
	return c, deadline{timer: t.clk.AfterFunc(l.cfg.Duration, c.expire), ctx: c}
}

// deadline ends a synchronous call's context at its deadline: the cancel of the runtime's
// timer context, or the timer of the policy's clock and the clockCtx it ends.
type deadline struct {
	cancel context.CancelFunc
	timer  clock.Timer
	ctx    *clockCtx
}

// release stops the deadline's timer and cancels the call's context, which lets go of
// its parent's hook; the cause stays the deadline's if the deadline ended it first.
func (d deadline) release() {
	if d.cancel != nil {
		d.cancel()
		return
	}
	d.timer.Stop()
	d.ctx.cancel(context.Canceled)
}

// timedOut discards the result of a call, whose context is ctx, that ran past its
// deadline, under l, whose function returned inner; start is the clock time the call
// started, read when there is a recorder.
func timedOut[T any](ctx context.Context, l *limit, inner error, start time.Duration) (T, error) {
	var err error = l.err
	if inner != nil {
		if nr, ok := errors.AsType[policy.NeverRetried](inner); ok && nr.NeverRetried() {
			err = l.final
		}
	}
	l.publish(ctx, err)
	if l.t.events.Rec != nil {
		l.t.record(ctx, observe.ResultTimedOut, start, err)
	}
	var zero T
	return zero, err
}

// publish publishes, with ctx, the EventExceeded event of a call whose context is ctx
// that ran past its deadline, under l, and failed with err.
func (l *limit) publish(ctx context.Context, err error) {
	l.t.events.PublishCtx(ctx, policy.Event{Kind: EventExceeded, Err: err,
		Attrs: policy.EventAttrs{slog.Duration(attrTimeout, l.cfg.Duration)}})
}

// now reads the clock: the monotonic clock directly for clock.System().
func (t *Timeout) now() time.Duration {
	if t.system {
		return sysclock.Now()
	}
	return t.clk.Now()
}

// ended returns the result of a call that ended in time with err: ResultSucceeded for a
// nil err, else ResultFailed.
func ended(err error) observe.Result {
	if err != nil {
		return observe.ResultFailed
	}
	return observe.ResultSucceeded
}

// record tells the recorder, which must be set, the outcome res of the call whose context
// is ctx, which started at clock time start (read when the recorder is timed) and ended
// now with err.
func (t *Timeout) record(ctx context.Context, res observe.Result, start time.Duration, err error) {
	var latency time.Duration
	if t.events.Timed {
		latency = sat.Left(t.now(), start)
	}
	t.events.Rec.Record(ctx, observe.Outcome{Result: res, Latency: latency, Err: err})
}
