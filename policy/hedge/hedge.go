// Package hedge is resilience4go's hedge (layer hedge.Layer, in the retry's place
// in the default order): when a call's attempt has no result after Delay, or fails with an
// error that hedges at once, another attempt starts beside it, up to MaxAttempts attempts
// in all and within a budget; the first success wins and every other attempt is canceled.
// Hedging trades a little extra load for a shorter tail of slow calls.
//
// A hedge guards calls that return a future only: there is no synchronous decorator (a
// composition that hedges synchronous calls is refused by package resilience with
// R4C-HDG-001). To hedge a synchronous fn, wrap
// func(ctx context.Context) *async.Future[T] { return async.Go(ctx, fn) } with WrapAsync
// (or DecorateAsyncFunc), and Await the future it returns.
//
// How a call goes:
//   - A call whose context is nil or already done when it arrives starts nothing,
//     publishes nothing and is not counted by the budget: its future fails with the
//     context's error (policy.ErrNilContext for a nil context).
//   - Attempt 1 starts at once. Each attempt runs the decorated function with a context
//     of its own, derived from the caller's, that the hedge cancels when the attempt is
//     no longer needed.
//   - Another attempt starts when no result has arrived Delay after the last attempt
//     started (a timer of the hedge's clock: no goroutine waits), or at once when an
//     attempt fails with an error that counts: not matching AbortOn and, when On is
//     set, matching it (errors.Is). Each new attempt must be allowed by the budget; one
//     that is refused is not started, EventSkipped is published, and the call tries no
//     further hedge: it goes on with the attempts already running.
//   - An attempt that fails with an error matching AbortOn ends the call at once with
//     that error. An error that does not count (outside a non-empty On list) is a result
//     but not a reason to hedge: the call waits for the attempts still in flight (the
//     delay's timer keeps running), and fails with it if there are none.
//   - The first success completes the call. Every other attempt is then canceled through
//     every inner layer: its future's Cancel is called (an inner circuit breaker records
//     nothing for a future completed with async.ErrCanceled, an inner bulkhead frees its
//     slot, a waiting rate limiter gives its permit back), then its context is canceled;
//     the delay's timer is stopped.
//   - When every attempt has failed and none can start, the call fails with the last
//     error to arrive.
//   - Cancel on the call's future, or the caller's context ending, cancels every attempt
//     and the timer; a context that ends fails the call with the context's error
//     (context.Canceled or context.DeadlineExceeded), as does an attempt's failure that
//     arrives once the context has ended.
//   - A nil future from the decorated function counts as a future failed with
//     async.ErrNilFuture. A panic in the decorated function goes on up the goroutine that
//     started the attempt (the caller's for attempt 1, a clock timer's or the one that
//     completed the previous attempt for the others) and ends the call first: the timer
//     is stopped, the other attempts are canceled and the call's future, if the caller
//     has it, fails with async.ErrPanicked.
//
// The budget: the hedges started in the last BudgetWindow may be at most BudgetPercent%
// of the calls that arrived in it, but a window always allows at least
// BudgetMinPerSecond × BudgetWindow (in seconds) hedges, so that a quiet service still
// hedges. A hedge is allowed when hedges < max(BudgetPercent/100 × calls,
// BudgetMinPerSecond × BudgetWindow) over the window, the calls counting the current
// one. The window is a fixed ring of 20 buckets on the hedge's clock, each
// BudgetWindow/20 wide (rounded down to the nanosecond, at least 1ns): counting
// allocates nothing, takes the budget's lock once per call and once per hedge, and the
// memory is fixed. It is exact to one bucket: a call or a hedge counts for more than 19
// buckets' width and for at most 20, after it happened; for a BudgetWindow that is a
// multiple of 20ns (every whole number of microseconds), more than BudgetWindow −
// BudgetWindow/20 and at most BudgetWindow. Another window is shortened by the rounding,
// by less than 20ns; a window under 20ns still spans 20 buckets of 1ns. Budget(false)
// removes the budget, and with it the counting.
//
// Events, one meaning per kind:
//   - EventHedged when an attempt starts beside the others: Attempt is its number (2 or
//     more), Wait the time since the call began, Err the error of the attempt that
//     failed and started it at once, nil when it started after the delay;
//   - EventWon when an attempt succeeds first in a call that started two attempts or
//     more: Attempt is the winner;
//   - EventSkipped when the budget refuses an attempt: Attempt is the attempt refused;
//   - EventFailed when a call that started two attempts or more fails: every attempt
//     failed, or one failed with an error matching AbortOn. Err is the error the call
//     fails with, Attempt the attempt that returned it.
//
// A call that never started a second attempt publishes neither EventWon nor EventFailed,
// whatever its outcome (it may have published EventSkipped): a call that succeeds or
// fails on its single attempt is the plain call. A call ended by Cancel or by its
// context publishes nothing more. Events are published on the goroutine where the hedge
// decides (the caller's, a clock timer's, or the one that completes an attempt), one
// call's in order; a recorder (a registry's observer) gets them with the context of the call.
//
// A recorder is told each call's outcome once, with the call's context, when the call
// ends: observe.ResultSucceeded when an attempt succeeded, else observe.ResultFailed with
// Err the error the call fails with (the context's error, async.ErrCanceled for a call
// ended by Cancel on its future, async.ErrPanicked); Attempts is the attempts started, Latency
// the time from the call's arrival to its end on the hedge's clock. A call refused on
// arrival because its context was nil or done, a call whose first attempt panics on the
// caller's goroutine, and a call while the hedge is disabled are not recorded.
//
// Defaults: Delay 1s, MaxAttempts 2, every error hedged, budget on with BudgetPercent
// 10, BudgetWindow 10s and BudgetMinPerSecond 1, Enabled true. A Hedge is safe for
// concurrent use; one instance may serve any number of functions and goroutines, which
// then share its budget.
package hedge

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/kind"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// Hedge is a hedging policy. Build it with New and decorate calls that return a future
// with DecorateAsyncFunc. It is safe for concurrent use; its configuration is fixed when
// it is built.
type Hedge struct {
	cfg     config
	enabled bool
	delay   time.Duration
	max     int
	cls     kind.Classifier
	clk     clock.Clock
	events  kind.Events
	budget  *budget // nil: no budget
}

// New builds a hedge from opts, over the defaults (Delay 1s, MaxAttempts 2, a budget of
// 10% of the calls and at least 1 hedge per second over 10s). An invalid
// configuration returns a *policy.ConfigError: R4C-ATR-004 (negative Delay), R4C-ATR-008
// (MaxAttempts outside 2..10) or R4C-ATR-007 (BudgetPercent outside [0, 100],
// BudgetWindow not positive, BudgetMinPerSecond negative or not finite). The instance id
// is the Name, else "hedge".
func New(opts ...Option) (*Hedge, error) { return kind.New(defaults, build, opts) }

func build(s settings) (*Hedge, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	kind.Own(&s.HedgeOn, &s.AbortOn)
	h := &Hedge{
		cfg:     s.config,
		enabled: !s.Disabled,
		delay:   s.Delay,
		max:     s.MaxAttempts,
		cls:     kind.Classifier{Include: s.HedgeOn, Exclude: s.AbortOn},
		clk:     s.ClockOrSystem(),
		events:  s.EventsOf(Layer, s.ID("hedge")),
	}
	if !s.NoBudget && !s.Disabled {
		h.budget = newBudget(s.config)
	}
	return h, nil
}

// allowed reports whether the budget lets a hedge start now, and counts it if so.
func (h *Hedge) allowed() bool {
	return h.budget == nil || h.budget.tryHedge(h.clk.Now())
}

// publish publishes an event of kind k of the call whose context is ctx.
func (h *Hedge) publish(ctx context.Context, k policy.EventKind, attempt int, wait time.Duration, err error) {
	h.events.PublishCtx(ctx, policy.Event{Kind: k, Attempt: attempt, Wait: wait, Err: err})
}

// record tells the recorder, which must be set, the outcome of the call whose context is
// ctx, which arrived at clock time begin, started attempts attempts and ends now with err:
// ResultSucceeded for a nil err, else ResultFailed.
func (h *Hedge) record(ctx context.Context, attempts int, begin time.Duration, err error) {
	o := observe.Outcome{Result: observe.ResultSucceeded, Attempts: attempts, Err: err}
	if h.events.Timed {
		o.Latency = sat.Left(h.clk.Now(), begin)
	}
	if err != nil {
		o.Result = observe.ResultFailed
	}
	h.events.Rec.Record(ctx, o)
}
