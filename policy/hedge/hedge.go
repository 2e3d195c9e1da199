// Package hedge is resilience4go's hedge (layer hedge.Layer, in the retry's place
// in the default order): when a call's attempt has no result after Delay, or fails with an
// error that hedges at once, another attempt starts beside it, up to MaxAttempts attempts
// in all and within a budget; the first success wins and every other attempt is canceled.
// Hedging trades a little extra load for a shorter tail of slow calls.
//
// Use it where an occasional attempt is much slower than the rest and a second attempt
// is cheap and safe to send (a read from replicas, a search, an idempotent request): the
// call takes the first answer instead of waiting out the slow one, while the budget
// keeps the extra load small even when the dependency is slow for every call.
//
// A hedge guards calls that return a future only: there is no synchronous decorator (a
// composition that hedges synchronous calls is refused by package resilience with
// R4C-HDG-001). Wrap the function with resilience.WrapAsync (or WrapAsync1) and a
// resilience.Hedge spec, or decorate it with DecorateAsyncFunc:
//
//	query, err := resilience.WrapAsync1(reg, "Search.Query", search, resilience.Hedge())
//
//	h, err := hedge.New(hedge.Delay(200 * time.Millisecond))
//	query := hedge.DecorateAsyncFunc(h, search) // search returns an *async.Future
//
// To hedge a synchronous fn, wrap (or decorate)
// func(ctx context.Context) *async.Future[T] { return async.Go(ctx, fn) } and Await the
// future it returns.
//
// Where the detail is:
//   - DecorateAsyncFunc: how a call goes, from its first attempt to its end, the
//     contexts of its attempts, and what a recorder is told;
//   - Budget: how the budget counts calls and hedges;
//   - EventHedged, EventWon, EventSkipped and EventFailed: the events;
//   - New (the defaults) and the options; Snapshot, the state of a hedge.
package hedge

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// Hedge is a hedging policy. Build it with New and decorate calls that return a future
// with DecorateAsyncFunc (a registry builds its own for resilience.Hedge). It is safe for
// concurrent use; one instance may serve any number of functions and goroutines, which
// then share its budget. Its configuration is fixed when it is built.
type Hedge struct {
	cfg     config
	enabled bool
	delay   time.Duration
	max     int
	cls     contract.Classifier
	clk     clock.Clock
	events  contract.Events
	budget  *budget // nil: no budget
	// gate, for a hedge returned by limitedBy, is asked too before each hedge; nil: none.
	gate contract.AttemptGate
}

// New builds a hedge from opts, over the defaults: Delay 1s, MaxAttempts 2, every error
// hedged, budget on with BudgetPercent 10, BudgetWindow 10s and BudgetMinPerSecond 1 (a
// budget of 10% of the calls and at least 1 hedge per second over 10s), Enabled true. An
// invalid
// configuration returns a *policy.ConfigError: R4C-ATR-004 (negative Delay), R4C-ATR-008
// (MaxAttempts outside 2..10) or R4C-ATR-007 (BudgetPercent outside [0, 100],
// BudgetWindow not positive, BudgetMinPerSecond negative or not finite). The instance id
// is the Name, else "" (no id: its errors and events name no instance).
func New(opts ...Option) (*Hedge, error) { return contract.New(defaults, build, opts) }

func build(s settings) (*Hedge, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	contract.Own(&s.HedgeOn, &s.AbortOn)
	h := &Hedge{
		cfg:     s.config,
		enabled: !s.Disabled,
		delay:   s.Delay,
		max:     s.MaxAttempts,
		cls:     contract.Classifier{Include: s.HedgeOn, Exclude: s.AbortOn},
		clk:     s.ClockOrSystem(),
		events:  s.EventsOf(Layer, s.ID("")),
	}
	if !s.NoBudget && !s.Disabled {
		h.budget = newBudget(s.config)
	}
	return h, nil
}

// allowed reports whether the budget, and the gate if any, let attempt (2 or more) of the
// call whose context is ctx start now, and counts it in both if so. The budget is asked
// first; a hedge it allows and the gate refuses is taken back from it.
func (h *Hedge) allowed(ctx context.Context, attempt int) bool {
	var now time.Duration
	if h.budget != nil {
		now = h.clk.Now()
		if !h.budget.tryHedge(now) {
			return false
		}
	}
	if h.gate == nil {
		return true
	}
	if _, ok := h.gate.TryAttempt(ctx, Layer, h.events.ID, attempt); ok {
		return true
	}
	if h.budget != nil {
		h.budget.untake(now)
	}
	return false
}

// limitedBy returns h bound to gate: a hedge that also asks gate before each hedge, and
// skips a hedge that gate refuses as one its own budget refuses. It is the same hedge in
// all else (id, configuration, budget, events); h itself is unchanged. A registry calls
// it, through the descriptor, when the composition of a hedge has a layer that limits
// attempts. It allocates the returned Hedge, once.
func (h *Hedge) limitedBy(gate contract.AttemptGate) *Hedge {
	b := *h
	b.gate = gate
	return &b
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
