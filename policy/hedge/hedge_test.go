package hedge_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/hedge"
)

var (
	errHedge = errors.New("unavailable") // an error that hedges
	errOther = errors.New("not found")   // an error outside HedgeOn
	errAbort = errors.New("forbidden")   // an error that aborts
)

// stack is a hedge over a circuit breaker over a bulkhead (two slots) over dep, composed
// by hand, all on one manual clock.
type stack struct {
	h    *hedge.Hedge
	clk  *clock.Manual
	rec  *contracttest.Recorder
	cb   *circuitbreaker.Breaker
	bh   *bulkhead.Bulkhead
	d    *dep
	call decorate.AsyncFunc[string, string]
}

func newStack(t *testing.T, steps []step, opts ...hedge.Option) *stack {
	t.Helper()
	h, clk, rec := newManual(t, opts...)
	cb, err := circuitbreaker.New(circuitbreaker.WithClock(clk), circuitbreaker.Name("dep"))
	require.NoError(t, err)
	bh, err := bulkhead.New(bulkhead.MaxConcurrent(2), bulkhead.WithClock(clk), bulkhead.Name("dep"))
	require.NoError(t, err)
	d := newDep(clk, steps...)
	call := hedge.DecorateAsyncFunc(h, circuitbreaker.Decorate[decorate.AsyncFunc[string, string], string, string](cb, bulkhead.Decorate[decorate.AsyncFunc[string, string], string, string](bh, d.call)))
	return &stack{h: h, clk: clk, rec: rec, cb: cb, bh: bh, d: d, call: call}
}

// SPEC HG-2, HG-3, HG-7: attempt 1 answers after 3s, attempt 2 after 100ms, Delay 1s: the
// call completes with attempt 2's result at exactly 1.1s; attempt 1 is canceled through
// every inner layer (its context is done, its bulkhead slot is free, the breaker records
// nothing for it) and nothing stays scheduled.
func TestHG7_SlowFirstAttemptLosesToHedge(t *testing.T) {
	s := newStack(t, []step{ok(3*time.Second, "slow"), ok(100*time.Millisecond, "fast")}, hedge.Delay(time.Second))
	f := s.call(context.Background(), "q")
	at := completedAt(s.clk, f)
	assert.Equal(t, 1, s.d.attempts(), "attempt 1 starts at once")
	assert.Equal(t, 1, s.bh.Snapshot().AvailableSlots)

	s.clk.Advance(time.Second - 1)
	assert.Equal(t, 1, s.d.attempts(), "no hedge before the delay")
	s.clk.Advance(1)
	assert.Equal(t, 2, s.d.attempts(), "the hedge starts at 1s")
	assert.Equal(t, 0, s.bh.Snapshot().AvailableSlots, "both attempts hold a slot")
	assert.True(t, pending(f))

	s.clk.Advance(99 * time.Millisecond)
	assert.True(t, pending(f))
	s.clk.Advance(time.Millisecond)
	v, err := result(t, f)
	require.NoError(t, err)
	assert.Equal(t, "fast", v)
	assert.Equal(t, 1100*time.Millisecond, at(), "completed at exactly 1.1s")

	assert.ErrorIs(t, s.d.ctx(1).Err(), context.Canceled, "attempt 1's context is done")
	_, err = result(t, s.d.fut(1))
	assert.ErrorIs(t, err, async.ErrCanceled, "attempt 1's future is canceled")
	assert.Error(t, s.d.ctx(2).Err(), "the winner's context is released too, once it has answered")
	assert.Equal(t, 2, s.bh.Snapshot().AvailableSlots, "both slots are free at 1.1s")
	cbs := s.cb.Snapshot()
	assert.Equal(t, 1, cbs.BufferedCalls, "exactly one outcome recorded: the success")
	assert.Zero(t, cbs.FailedCalls, "the canceled attempt is not a failure")
	assert.Zero(t, s.clk.PendingTasks(), "no timer left: neither the hedge's nor attempt 1's")
	assert.Equal(t, []time.Duration{0, time.Second}, s.d.startTimes())

	assert.Equal(t, []policy.Event{
		{Kind: hedge.EventHedged, Instance: "Svc.Call", At: time.Second, Wait: time.Second, Attempt: 2},
		{Kind: hedge.EventWon, Instance: "Svc.Call", At: 1100 * time.Millisecond, Attempt: 2},
	}, s.rec.Events())
	assert.Equal(t, withBudget(hedge.Snapshot{Instance: "Svc.Call", Calls: 1, Hedges: 1, BudgetAvailable: 9,
		Delay: time.Second, MaxAttempts: 2}), s.h.Snapshot())

	s.clk.Advance(5 * time.Second)
	assert.Equal(t, 1, s.cb.Snapshot().BufferedCalls, "nothing comes later")
	assert.Len(t, s.rec.Events(), 2)
}

// SPEC HG-7: the first attempt wins when it answers first; the hedge is canceled the same
// way, and HedgeWon names attempt 1.
func TestHG7_FirstAttemptWinsAfterHedge(t *testing.T) {
	s := newStack(t, []step{ok(1500*time.Millisecond, "first"), ok(time.Second, "second")})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := s.call(ctx, "q")
	s.clk.Advance(1500 * time.Millisecond)
	v, err := result(t, f)
	require.NoError(t, err)
	assert.Equal(t, "first", v)
	assert.ErrorIs(t, s.d.ctx(2).Err(), context.Canceled)
	assert.NoError(t, ctx.Err(), "the caller's context is untouched")
	assert.Equal(t, 2, s.bh.Snapshot().AvailableSlots)
	assert.Equal(t, 1, s.cb.Snapshot().BufferedCalls)
	assert.Zero(t, s.cb.Snapshot().FailedCalls)
	assert.Zero(t, s.clk.PendingTasks())
	events := s.rec.Events()
	require.Len(t, events, 2)
	assert.Equal(t, hedge.EventWon, events[1].Kind)
	assert.Equal(t, 1, events[1].Attempt)
}

type ctxKey struct{}

// SPEC HG-2: each attempt runs with a context of its own, derived from the caller's (its
// values and its end), canceled when the call is over.
func TestHG2_EachAttemptHasItsOwnContext(t *testing.T) {
	h, clk, _ := newManual(t, hedge.MaxAttempts(3), hedge.Delay(10*time.Millisecond))
	d := newDep(clk, never(), never(), ok(time.Second, "third"))
	ctx := context.WithValue(context.Background(), ctxKey{}, "v")
	f := hedge.DecorateAsyncFunc(h, d.call)(ctx, "q")
	clk.Advance(20 * time.Millisecond)
	require.Equal(t, 3, d.attempts())
	for i := 1; i <= 3; i++ {
		assert.Equal(t, "v", d.ctx(i).Value(ctxKey{}), "attempt %d sees the caller's values", i)
		assert.NotSame(t, ctx, d.ctx(i))
	}
	assert.NotEqual(t, d.ctx(1), d.ctx(2))
	assert.NoError(t, d.ctx(1).Err(), "still running")
	clk.Advance(time.Second)
	v, err := result(t, f)
	require.NoError(t, err)
	assert.Equal(t, "third", v)
	for i := 1; i <= 3; i++ {
		assert.ErrorIs(t, d.ctx(i).Err(), context.Canceled, "attempt %d's context is canceled", i)
	}
}

// SPEC HG-3: another attempt starts Delay after the last one started, up to MaxAttempts;
// the timer is a clock timer, gone once no attempt can start.
func TestHG3_DelayAfterLastAttemptStarted(t *testing.T) {
	h, clk, rec := newManual(t, hedge.MaxAttempts(3), hedge.Delay(time.Second))
	d := newDep(clk, never())
	f := hedge.DecorateAsyncFunc(h, d.call)(context.Background(), "q")
	assert.Equal(t, 1, clk.PendingTasks(), "one timer: the hedge's")
	clk.Advance(10 * time.Second)
	assert.Equal(t, []time.Duration{0, time.Second, 2 * time.Second}, d.startTimes())
	assert.Zero(t, clk.PendingTasks(), "no timer once MaxAttempts attempts started")
	assert.True(t, pending(f))
	assert.Equal(t, []policy.Event{
		{Kind: hedge.EventHedged, Instance: "Svc.Call", At: time.Second, Wait: time.Second, Attempt: 2},
		{Kind: hedge.EventHedged, Instance: "Svc.Call", At: 2 * time.Second, Wait: 2 * time.Second, Attempt: 3},
	}, rec.Events())
	assert.False(t, f.Cancel(), "the attempts had started")
	for i := 1; i <= 3; i++ {
		_, err := result(t, d.fut(i))
		assert.ErrorIs(t, err, async.ErrCanceled)
	}
}

// SPEC HG-3: Delay 0 starts every attempt at once, one after the other, on clock timers.
func TestHG3_ZeroDelay(t *testing.T) {
	h, clk, rec := newManual(t, hedge.MaxAttempts(4), hedge.Delay(0))
	d := newDep(clk, never())
	f := hedge.DecorateAsyncFunc(h, d.call)(context.Background(), "q")
	assert.Equal(t, 1, d.attempts())
	clk.Advance(0)
	assert.Equal(t, 4, d.attempts())
	assert.Equal(t, 3, rec.Count(hedge.EventHedged))
	f.Cancel()
}

// SPEC HG-4: an error that counts starts the next attempt at once: at t=0 when attempt 1
// fails at 0, and the delay then runs from that attempt's start.
func TestHG4_HedgeOnErrorStartsNextAttemptAtOnce(t *testing.T) {
	t.Run("failed at once", func(t *testing.T) {
		h, clk, rec := newManual(t, hedge.On(errHedge))
		d := newDep(clk, failsNow(errHedge), ok(100*time.Millisecond, "second"))
		f := hedge.DecorateAsyncFunc(h, d.call)(context.Background(), "q")
		assert.Equal(t, []time.Duration{0, 0}, d.startTimes(), "attempt 2 started at t=0, in the call")
		clk.Advance(100 * time.Millisecond)
		v, err := result(t, f)
		require.NoError(t, err)
		assert.Equal(t, "second", v)
		assert.Equal(t, []policy.Event{
			{Kind: hedge.EventHedged, Instance: "Svc.Call", At: 0, Attempt: 2, Err: errHedge},
			{Kind: hedge.EventWon, Instance: "Svc.Call", At: 100 * time.Millisecond, Attempt: 2},
		}, rec.Events())
		assert.Zero(t, clk.PendingTasks())
	})
	t.Run("failed later", func(t *testing.T) {
		h, clk, rec := newManual(t, hedge.MaxAttempts(3), hedge.On(errHedge))
		d := newDep(clk, fails(300*time.Millisecond, fmtWrap(errHedge)), never())
		f := hedge.DecorateAsyncFunc(h, d.call)(context.Background(), "q")
		clk.Advance(300 * time.Millisecond)
		assert.Equal(t, []time.Duration{0, 300 * time.Millisecond}, d.startTimes(), "at once, not at 1s")
		clk.Advance(time.Second - 1)
		assert.Equal(t, 2, d.attempts())
		clk.Advance(1)
		assert.Equal(t, []time.Duration{0, 300 * time.Millisecond, 1300 * time.Millisecond}, d.startTimes(),
			"the delay runs from the last attempt's start")
		events := rec.Events()
		require.Len(t, events, 2)
		assert.ErrorIs(t, events[0].Err, errHedge)
		assert.Equal(t, 300*time.Millisecond, events[0].Wait)
		assert.NoError(t, events[1].Err, "after the delay")
		assert.Equal(t, 1300*time.Millisecond, events[1].Wait)
		assert.False(t, f.Cancel())
		assert.Zero(t, clk.PendingTasks())
	})
	t.Run("through the breaker and the bulkhead", func(t *testing.T) {
		s := newStack(t, []step{failsNow(errHedge), ok(time.Millisecond, "second")})
		f := s.call(context.Background(), "q")
		assert.Equal(t, 2, s.d.attempts())
		assert.Equal(t, 1, s.bh.Snapshot().AvailableSlots, "the failed attempt gave its slot back")
		s.clk.Advance(time.Millisecond)
		_, err := result(t, f)
		require.NoError(t, err)
		cbs := s.cb.Snapshot()
		assert.Equal(t, []int{2, 1}, []int{cbs.BufferedCalls, cbs.FailedCalls}, "the failure and the success")
	})
}

func fmtWrap(err error) error { return errors.Join(errors.New("attempt"), err) }

// SPEC HG-5: an error matching AbortOn ends the call at once with it, cancels every other
// attempt and the timer, and wins over HedgeOn.
func TestHG5_AbortOnStopsEverything(t *testing.T) {
	h, clk, rec := newManual(t, hedge.MaxAttempts(3), hedge.On(errAbort), hedge.AbortOn(errAbort))
	d := newDep(clk, never(), fails(200*time.Millisecond, errAbort))
	f := hedge.DecorateAsyncFunc(h, d.call)(context.Background(), "q")
	at := completedAt(clk, f)
	clk.Advance(time.Second)
	assert.Equal(t, 2, clk.PendingTasks(), "attempt 2's answer; the third attempt's timer")
	clk.Advance(200 * time.Millisecond)
	_, err := result(t, f)
	assert.Same(t, errAbort, err)
	assert.Equal(t, 1200*time.Millisecond, at())
	assert.Equal(t, 2, d.attempts(), "no third attempt")
	assert.ErrorIs(t, d.ctx(1).Err(), context.Canceled)
	_, err = result(t, d.fut(1))
	assert.ErrorIs(t, err, async.ErrCanceled)
	assert.Zero(t, clk.PendingTasks(), "the timer of attempt 3 is stopped")
	assert.Equal(t, []policy.Event{
		{Kind: hedge.EventHedged, Instance: "Svc.Call", At: time.Second, Wait: time.Second, Attempt: 2},
		{Kind: hedge.EventFailed, Instance: "Svc.Call", At: 1200 * time.Millisecond, Attempt: 2, Err: errAbort},
	}, rec.Events())
	clk.Advance(time.Hour)
	assert.Equal(t, 2, d.attempts())
}

// SPEC HG-5, HG-13: AbortOn on a call's single attempt fails it at once, and publishes
// nothing: the call never hedged.
func TestHG5_AbortOnFirstAttempt(t *testing.T) {
	h, clk, rec := newManual(t, hedge.AbortOn(errAbort))
	d := newDep(clk, failsNow(errAbort))
	f := hedge.DecorateAsyncFunc(h, d.call)(context.Background(), "q")
	_, err := result(t, f)
	assert.Same(t, errAbort, err)
	assert.Same(t, d.fut(1), f, "attempt 1's future, as it is")
	assert.ErrorIs(t, d.ctx(1).Err(), context.Canceled)

	d = newDep(clk, fails(10*time.Millisecond, errAbort))
	f = hedge.DecorateAsyncFunc(h, d.call)(context.Background(), "q")
	clk.Advance(10 * time.Millisecond)
	_, err = result(t, f)
	assert.Same(t, errAbort, err)
	assert.Zero(t, clk.PendingTasks())
	assert.Empty(t, rec.Events())
}

// SPEC HG-6: an error outside HedgeOn is a result but not a reason to hedge: with nothing
// else in flight the call fails with it at once; with attempts in flight it waits for
// them, and the delay's timer keeps running.
func TestHG6_ErrorThatDoesNotCount(t *testing.T) {
	t.Run("alone", func(t *testing.T) {
		h, clk, rec := newManual(t, hedge.On(errHedge))
		d := newDep(clk, fails(200*time.Millisecond, errOther))
		f := hedge.DecorateAsyncFunc(h, d.call)(context.Background(), "q")
		clk.Advance(200 * time.Millisecond)
		_, err := result(t, f)
		assert.Same(t, errOther, err)
		assert.Equal(t, 1, d.attempts())
		assert.Zero(t, clk.PendingTasks(), "the delay's timer is stopped")
		assert.Empty(t, rec.Events())

		d = newDep(clk, failsNow(errOther))
		f = hedge.DecorateAsyncFunc(h, d.call)(context.Background(), "q")
		_, err = result(t, f)
		assert.Same(t, errOther, err)
		assert.Same(t, d.fut(1), f, "failed at once: attempt 1's future, as it is")
		assert.Zero(t, clk.PendingTasks())
	})
	t.Run("others in flight", func(t *testing.T) {
		h, clk, rec := newManual(t, hedge.MaxAttempts(3), hedge.On(errHedge))
		d := newDep(clk, ok(2500*time.Millisecond, "first"), fails(100*time.Millisecond, errOther))
		f := hedge.DecorateAsyncFunc(h, d.call)(context.Background(), "q")
		clk.Advance(1100 * time.Millisecond)
		assert.Equal(t, 2, d.attempts(), "attempt 2 failed at 1.1s: no hedge at once")
		assert.True(t, pending(f), "attempt 1 is still in flight")
		clk.Advance(900 * time.Millisecond)
		assert.Equal(t, []time.Duration{0, time.Second, 2 * time.Second}, d.startTimes(),
			"the timer kept running: attempt 3 at 2s")
		clk.Advance(500 * time.Millisecond)
		v, err := result(t, f)
		require.NoError(t, err)
		assert.Equal(t, "first", v)
		assert.Equal(t, []policy.EventKind{hedge.EventHedged, hedge.EventHedged, hedge.EventWon}, rec.Kinds())
		assert.Equal(t, 1, rec.Events()[2].Attempt)
		assert.Zero(t, clk.PendingTasks())
	})
}

// SPEC HG-8: when every attempt has failed and none can start, the call fails with the
// last error to arrive, and HedgeFailed names it.
func TestHG8_AllAttemptsFailWithTheLastError(t *testing.T) {
	errFirst, errSecond := errors.New("first"), errors.New("second")
	h, clk, rec := newManual(t)
	d := newDep(clk, fails(1800*time.Millisecond, errFirst), fails(500*time.Millisecond, errSecond))
	f := hedge.DecorateAsyncFunc(h, d.call)(context.Background(), "q")
	at := completedAt(clk, f)
	clk.Advance(1500 * time.Millisecond)
	assert.True(t, pending(f), "attempt 1 is in flight")
	clk.Advance(300 * time.Millisecond)
	_, err := result(t, f)
	assert.Same(t, errFirst, err, "attempt 1's error arrived last")
	assert.Equal(t, 1800*time.Millisecond, at())
	assert.Equal(t, []policy.Event{
		{Kind: hedge.EventHedged, Instance: "Svc.Call", At: time.Second, Wait: time.Second, Attempt: 2},
		{Kind: hedge.EventFailed, Instance: "Svc.Call", At: 1800 * time.Millisecond, Attempt: 1, Err: errFirst},
	}, rec.Events())

	// Every attempt failing at once: the last is attempt MaxAttempts.
	h, clk, rec = newManual(t, hedge.MaxAttempts(4))
	d = newDep(clk, failsNow(errFirst), failsNow(errFirst), failsNow(errFirst), failsNow(errSecond))
	f = hedge.DecorateAsyncFunc(h, d.call)(context.Background(), "q")
	_, err = result(t, f)
	assert.Same(t, errSecond, err)
	assert.Equal(t, 4, d.attempts())
	assert.Equal(t, []policy.EventKind{hedge.EventHedged, hedge.EventHedged, hedge.EventHedged, hedge.EventFailed}, rec.Kinds())
	assert.Equal(t, 4, rec.Events()[3].Attempt)
	assert.Zero(t, clk.PendingTasks())
	for i := 1; i <= 4; i++ {
		assert.Error(t, d.ctx(i).Err())
	}
}

// SPEC HG-13: a call that succeeds or fails on its single attempt publishes nothing.
func TestHG13_SingleAttemptCallsPublishNothing(t *testing.T) {
	h, clk, rec := newManual(t, hedge.On(errHedge))
	call := hedge.DecorateAsyncFunc(h, newDep(clk, ok(0, "v"), fails(0, errOther), ok(time.Second-1, "v")).call)
	for range 3 {
		f := call(context.Background(), "q")
		clk.Advance(time.Second - 1)
		_, done, _ := f.Result()
		assert.True(t, done)
	}
	assert.Empty(t, rec.Events())
	assert.Equal(t, 0, h.Snapshot().Hedges)
	assert.Equal(t, 3, h.Snapshot().Calls)
}
