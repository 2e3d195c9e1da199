package circuitbreaker_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	cb "github.com/resilience4go/resilience4go/policy/circuitbreaker"
)

func TestStateNames(t *testing.T) {
	assert.Equal(t, "closed", cb.Closed)
	assert.Equal(t, "open", cb.Open)
	assert.Equal(t, "half-open", cb.HalfOpen)
	assert.Equal(t, "disabled", cb.Disabled)
	assert.Equal(t, "forced-open", cb.ForcedOpen)
	assert.Equal(t, "COUNT_BASED", cb.CountBased)
	assert.Equal(t, "TIME_BASED", cb.TimeBased)
}

func TestOpensAtThresholdAndNotBeforeMinimumCalls(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowSize(10), cb.MinimumCalls(4), cb.FailureRateThreshold(50))

	// Three failures: a 100% failure rate, but fewer than MinimumCalls outcomes.
	f.do(fail, fail, fail)
	require.Equal(t, cb.Closed, f.state())
	assert.Equal(t, -1.0, f.b.Snapshot().FailureRate)

	// The fourth outcome is a success: 3/4 = 75% ≥ 50%: open.
	f.do(ok)
	require.Equal(t, cb.Open, f.state())
	f.rejected()
}

func TestStaysClosedBelowThresholdAndOpensExactlyAtIt(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowSize(4), cb.MinimumCalls(4), cb.FailureRateThreshold(50))
	f.do(ok, ok, fail, ok) // 25%
	require.Equal(t, cb.Closed, f.state())
	assert.Equal(t, 25.0, f.b.Snapshot().FailureRate)
	f.do(ok) // window ok, fail, ok, ok: 25%
	require.Equal(t, cb.Closed, f.state())
	f.do(fail) // window fail, ok, ok, fail: exactly 50%
	require.Equal(t, cb.Open, f.state())
	assert.Equal(t, 50.0, f.b.Snapshot().FailureRate)
}

func TestMinimumCallsCappedAtCountWindowSize(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowSize(3), cb.MinimumCalls(100))
	f.do(fail, fail)
	require.Equal(t, cb.Closed, f.state())
	f.do(fail) // the window is full: 3 calls are enough
	require.Equal(t, cb.Open, f.state())
}

func TestMinimumCallsNotCappedForTimeWindow(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowType(cb.TimeBased), cb.SlidingWindowSize(3), cb.MinimumCalls(5))
	f.do(fail, fail, fail, fail)
	require.Equal(t, cb.Closed, f.state())
	f.do(fail)
	require.Equal(t, cb.Open, f.state())
}

func TestCountWindowSlides(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowSize(4), cb.MinimumCalls(4), cb.FailureRateThreshold(75))
	f.do(fail, fail, ok, ok) // 50%
	s := f.b.Snapshot()
	assert.Equal(t, 4, s.BufferedCalls)
	assert.Equal(t, 2, s.FailedCalls)

	f.do(ok) // the oldest failure drops out
	s = f.b.Snapshot()
	assert.Equal(t, 4, s.BufferedCalls)
	assert.Equal(t, 1, s.FailedCalls)
	assert.Equal(t, 25.0, s.FailureRate)

	f.do(ok) // the other one too
	s = f.b.Snapshot()
	assert.Equal(t, 4, s.BufferedCalls)
	assert.Equal(t, 0, s.FailedCalls)

	// Five failures in all, but only the last four calls count: ok, fail, fail, fail = 75%.
	f.do(fail, fail)
	require.Equal(t, cb.Closed, f.state())
	f.do(fail)
	require.Equal(t, cb.Open, f.state())
}

func TestTimeWindowDropsOldBuckets(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowType(cb.TimeBased), cb.SlidingWindowSize(3),
		cb.MinimumCalls(3), cb.FailureRateThreshold(50))

	f.clk.Advance(500 * time.Millisecond)
	f.do(fail) // second 0
	f.clk.Advance(time.Second)
	f.do(fail) // second 1
	assert.Equal(t, 2, f.b.Snapshot().BufferedCalls)

	f.clk.Advance(time.Second) // 2.5s: the window is seconds 0..2
	assert.Equal(t, 2, f.b.Snapshot().BufferedCalls)

	f.clk.Advance(700 * time.Millisecond) // 3.2s: seconds 1..3, second 0 dropped
	s := f.b.Snapshot()
	assert.Equal(t, 1, s.BufferedCalls)
	assert.Equal(t, 1, s.FailedCalls)

	f.clk.Advance(800 * time.Millisecond) // 4.0s: seconds 2..4, both dropped
	s = f.b.Snapshot()
	assert.Equal(t, 0, s.BufferedCalls)
	assert.Equal(t, -1.0, s.FailureRate)

	// With the old failures still counted, 2 of 5 plus this one would open; without them,
	// 1 of 3 is 33%.
	f.do(ok, ok, fail)
	require.Equal(t, cb.Closed, f.state())
	f.do(fail) // 2 of 4: 50%
	require.Equal(t, cb.Open, f.state())
}

func TestTimeWindowLongQuietSpellEmptiesWindow(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowType(cb.TimeBased), cb.SlidingWindowSize(2), cb.MinimumCalls(2))
	f.do(fail)
	f.clk.Advance(time.Hour)
	f.do(fail) // the first failure is long gone: 1 call < MinimumCalls
	require.Equal(t, cb.Closed, f.state())
	assert.Equal(t, 1, f.b.Snapshot().BufferedCalls)
}

func TestOpenToHalfOpenOnNextCallAfterWaitInOpen(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowSize(2), cb.MinimumCalls(2), cb.WaitInOpen(10*time.Second),
		cb.PermittedInHalfOpen(2))
	f.do(fail, fail)
	require.Equal(t, cb.Open, f.state())
	require.Zero(t, f.clk.PendingTasks(), "no timer: half-open is computed on the next call")

	f.clk.Advance(10*time.Second - 1)
	rej := f.rejected()
	assert.Equal(t, cb.Open, rej.State())
	require.Equal(t, cb.Open, f.state())

	f.clk.Advance(1)
	// Nothing happens by itself: the state moves on the next call.
	require.Equal(t, cb.Open, f.state())
	require.Zero(t, f.clk.PendingTasks())

	f.do(ok) // the call that finds the wait over is the first trial
	require.Equal(t, cb.HalfOpen, f.state())
	assert.Equal(t, 1, f.b.Snapshot().BufferedCalls)
	require.Zero(t, f.clk.PendingTasks())
}

func TestWaitInOpenZeroGoesHalfOpenOnNextCall(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowSize(1), cb.WaitInOpen(0), cb.PermittedInHalfOpen(1))
	f.do(fail)
	require.Equal(t, cb.Open, f.state())
	f.do(ok)
	require.Equal(t, cb.Closed, f.state())
}

// openedBreaker returns a fixture whose breaker has just opened on 2 failures, with a
// 10s wait and permitted trial calls.
func openedBreaker(t *testing.T, permitted int, opts ...cb.Option) *fixture {
	t.Helper()
	f := newFixture(t, append([]cb.Option{cb.SlidingWindowSize(2), cb.MinimumCalls(2),
		cb.WaitInOpen(10 * time.Second), cb.PermittedInHalfOpen(permitted)}, opts...)...)
	f.do(fail, fail)
	require.Equal(t, cb.Open, f.state())
	return f
}

func TestHalfOpenClosesOnGoodTrials(t *testing.T) {
	f := openedBreaker(t, 3)
	f.clk.Advance(10 * time.Second)
	f.do(ok, fail) // 1 of 2: not decided until every trial is done
	require.Equal(t, cb.HalfOpen, f.state())
	f.do(ok) // 1 of 3 = 33% < 50%
	require.Equal(t, cb.Closed, f.state())

	s := f.b.Snapshot()
	assert.Equal(t, 0, s.BufferedCalls, "closed again with an empty window")
	assert.Equal(t, -1.0, s.FailureRate)

	f.do(fail) // one failure in a fresh window does not reopen
	require.Equal(t, cb.Closed, f.state())
}

func TestHalfOpenReopensOnBadTrials(t *testing.T) {
	f := openedBreaker(t, 3)
	f.clk.Advance(10 * time.Second)
	f.do(fail, ok, fail) // 2 of 3 = 67% ≥ 50%
	require.Equal(t, cb.Open, f.state())

	// A new wait, from the moment it reopened.
	f.clk.Advance(10*time.Second - 1)
	f.rejected()
	f.clk.Advance(1)
	f.do(ok)
	require.Equal(t, cb.HalfOpen, f.state())
}

func TestHalfOpenRejectsCallsBeyondTrials(t *testing.T) {
	f := openedBreaker(t, 2)
	f.clk.Advance(10 * time.Second)
	var inner int
	var nested []error
	// Two trials in flight at once (the second made from inside the first), then a third.
	var call decorate.Func[int, int]
	call = cb.DecorateFunc(f.b, func(ctx context.Context, depth int) (int, error) {
		inner++
		if depth < 3 {
			_, err := call(ctx, depth+1)
			nested = append(nested, err)
		}
		return depth, nil
	})
	_, err := call(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, 2, inner, "only PermittedInHalfOpen trials ran")
	require.Len(t, nested, 2)
	require.ErrorIs(t, nested[0], cb.ErrOpen, "the third call is rejected while two trials run")
	var oe *cb.OpenError
	require.ErrorAs(t, nested[0], &oe)
	assert.Equal(t, cb.HalfOpen, oe.State())
	assert.NoError(t, nested[1])
	require.Equal(t, cb.Closed, f.state(), "both trials succeeded")
	assert.Equal(t, 0, f.b.Snapshot().NotPermittedCalls, "a new state counts its own rejections")
}

func TestHalfOpenCompletedTrialsStillHoldTheirSlots(t *testing.T) {
	f := openedBreaker(t, 3)
	f.clk.Advance(10 * time.Second)
	f.do(ok, ok)
	// Two trials done, none in flight: one slot is left.
	f.do(ok)
	require.Equal(t, cb.Closed, f.state())
}

func TestSlowCallsCount(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowSize(4), cb.MinimumCalls(4), cb.FailureRateThreshold(100),
		cb.SlowCallThreshold(time.Second), cb.SlowCallRateThreshold(50))
	f.do(slow(time.Second+time.Nanosecond, nil)) // over the threshold: slow
	f.do(slow(time.Second, nil), ok)             // exactly the threshold: not slow (as in Resilience4j)
	s := f.b.Snapshot()
	assert.Equal(t, 3, s.BufferedCalls)
	assert.Equal(t, 1, s.SlowCalls)
	assert.Equal(t, 0, s.FailedCalls)
	require.Equal(t, cb.Closed, f.state())

	f.do(slow(2*time.Second, errBoom)) // slow and failed: 2 of 4 slow = 50%
	require.Equal(t, cb.Open, f.state())
	s = f.b.Snapshot()
	assert.Equal(t, 2, s.SlowCalls)
	assert.Equal(t, 1, s.FailedCalls)
	assert.Equal(t, 50.0, s.SlowCallRate)
	assert.Equal(t, 25.0, s.FailureRate)
}

func TestSlowTrialsReopen(t *testing.T) {
	f := openedBreaker(t, 2, cb.SlowCallThreshold(time.Second), cb.SlowCallRateThreshold(50))
	f.clk.Advance(10 * time.Second)
	f.do(ok, slow(time.Second+1, nil)) // 1 of 2 slow = 50%
	require.Equal(t, cb.Open, f.state())
}

func TestIgnoreOn(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowSize(2), cb.MinimumCalls(2), cb.IgnoreOn(errIgnored))
	f.do(step{err: errIgnored}, step{err: fmt.Errorf("wrapped: %w", errIgnored)}, step{err: errIgnored})
	require.Equal(t, cb.Closed, f.state())
	assert.Equal(t, 0, f.b.Snapshot().BufferedCalls, "ignored calls are neither successes nor failures")
	f.do(fail, fail)
	require.Equal(t, cb.Open, f.state())
}

func TestIgnoreOnInHalfOpenGivesTheSlotBack(t *testing.T) {
	f := openedBreaker(t, 1, cb.IgnoreOn(errIgnored))
	f.clk.Advance(10 * time.Second)
	f.do(step{err: errIgnored})
	require.Equal(t, cb.HalfOpen, f.state())
	assert.Equal(t, 0, f.b.Snapshot().BufferedCalls)
	f.do(ok) // the slot was given back: this is the one trial
	require.Equal(t, cb.Closed, f.state())
}

func TestRecordOn(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowSize(3), cb.MinimumCalls(3), cb.FailureRateThreshold(50),
		cb.RecordOn(errBoom))
	f.do(step{err: errOther}, step{err: errOther})
	s := f.b.Snapshot()
	assert.Equal(t, 2, s.BufferedCalls, "other errors count as successes")
	assert.Equal(t, 0, s.FailedCalls)
	f.do(step{err: fmt.Errorf("wrapped: %w", errBoom)}) // 1 of 3
	require.Equal(t, cb.Closed, f.state())
	f.do(fail) // other, boom, boom: 67%
	require.Equal(t, cb.Open, f.state())
}

func TestIgnoreOnWinsOverRecordOn(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowSize(1), cb.RecordOn(errBoom), cb.IgnoreOn(errBoom))
	f.do(fail)
	require.Equal(t, cb.Closed, f.state())
	assert.Equal(t, 0, f.b.Snapshot().BufferedCalls)
}

func TestContextErrorsCountAsFailures(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowSize(2), cb.MinimumCalls(2))
	f.do(step{err: context.Canceled}, step{err: context.DeadlineExceeded})
	require.Equal(t, cb.Open, f.state())

	g := newFixture(t, cb.SlidingWindowSize(2), cb.MinimumCalls(2), cb.IgnoreOn(context.Canceled))
	g.do(step{err: context.Canceled}, step{err: context.Canceled})
	require.Equal(t, cb.Closed, g.state())
}

// TransitionTo moves the breaker to any state by hand, from which it goes on by itself:
// Open waits WaitInOpen, HalfOpen takes trials, Closed starts an empty window. Another
// name is refused with R4C-ATR-007 and changes nothing.
func TestTransitionToOwnCycle(t *testing.T) {
	f := newFixture(t, cb.WaitInOpen(time.Second), cb.PermittedInHalfOpen(1), cb.SlidingWindowSize(2), cb.MinimumCalls(2))
	f.do(fail)
	require.NoError(t, f.b.TransitionTo(cb.Open))
	require.Equal(t, cb.Open, f.state())
	f.rejected()
	f.clk.Advance(time.Second)
	f.do(ok) // the one trial
	require.Equal(t, cb.Closed, f.state())

	require.NoError(t, f.b.TransitionTo(cb.HalfOpen))
	f.do(fail)
	require.Equal(t, cb.Open, f.state(), "the trial failed")

	require.NoError(t, f.b.TransitionTo(cb.Closed))
	assert.Zero(t, f.b.Snapshot().BufferedCalls, "an empty window")

	before := f.b.Snapshot()
	err := f.b.TransitionTo("ajar")
	var ce *policy.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, r4c.OutOfRange, ce.Code)
	assert.Equal(t, before, f.b.Snapshot())
	assert.Equal(t, []string{"closed→open", "open→half-open", "half-open→closed", "closed→half-open",
		"half-open→open", "open→closed"}, f.rec.transitions())
}

func TestTransitionToForcedOpen(t *testing.T) {
	f := newFixture(t, cb.WaitInOpen(time.Second))
	_ = f.b.TransitionTo(cb.ForcedOpen)
	require.Equal(t, cb.ForcedOpen, f.state())
	rej := f.rejected()
	assert.Equal(t, cb.ForcedOpen, rej.State())
	f.clk.Advance(time.Hour) // no wait ends a forced open
	f.rejected()
	require.Equal(t, cb.ForcedOpen, f.state())
	s := f.b.Snapshot()
	assert.Equal(t, 2, s.NotPermittedCalls)
	assert.Equal(t, -1.0, s.FailureRate)

	_ = f.b.TransitionTo(cb.ForcedOpen) // already forced open: nothing happens
	assert.Equal(t, []string{"closed→forced-open"}, f.rec.transitions())
}

func TestTransitionToDisabled(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowSize(1))
	_ = f.b.TransitionTo(cb.Disabled)
	require.Equal(t, cb.Disabled, f.state())
	f.do(repeat(fail, 10)...)
	require.Equal(t, cb.Disabled, f.state())
	s := f.b.Snapshot()
	assert.Equal(t, 0, s.BufferedCalls, "nothing is recorded")
	assert.Equal(t, cb.Disabled, s.State)
	assert.Zero(t, f.rec.count(cb.EventRejected))
}

func TestResetClosesWithEmptyWindow(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowSize(4), cb.MinimumCalls(4))
	f.do(fail, fail, fail)
	f.b.Reset()
	require.Equal(t, cb.Closed, f.state())
	assert.Equal(t, 0, f.b.Snapshot().BufferedCalls)
	f.do(fail) // would have been the 4th failure
	require.Equal(t, cb.Closed, f.state())
	assert.Empty(t, f.rec.transitions(), "Reset of a closed breaker changes no state")

	f.do(fail, fail, fail)
	require.Equal(t, cb.Open, f.state())
	f.b.Reset()
	require.Equal(t, cb.Closed, f.state())
	_ = f.b.TransitionTo(cb.ForcedOpen)
	f.b.Reset()
	require.Equal(t, cb.Closed, f.state())
	_ = f.b.TransitionTo(cb.Disabled)
	f.b.Reset()
	require.Equal(t, cb.Closed, f.state())
	assert.Equal(t, []string{"closed→open", "open→closed", "closed→forced-open", "forced-open→closed",
		"closed→disabled", "disabled→closed"}, f.rec.transitions())
}

func TestEnabledFalseStartsDisabledAndResetKeepsIt(t *testing.T) {
	f := newFixture(t, cb.Enabled(false), cb.SlidingWindowSize(1))
	require.Equal(t, cb.Disabled, f.state())
	f.do(fail, fail)
	require.Equal(t, cb.Disabled, f.state())
	_ = f.b.TransitionTo(cb.ForcedOpen)
	f.rejected()
	f.b.Reset()
	require.Equal(t, cb.Disabled, f.state(), "the configuration decides the state Reset returns to")
	f.do(fail)
}

func TestOutcomesRecordedOnlyInTheStateThatAdmittedThem(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowSize(2), cb.MinimumCalls(2))
	var during func()
	call := cb.DecorateFunc(f.b, func(context.Context, struct{}) (int, error) {
		during()
		return 0, errBoom
	})
	// A call admitted while closed fails after a Reset: not recorded in the new window.
	during = f.b.Reset
	_, _ = call(context.Background(), struct{}{})
	assert.Equal(t, 0, f.b.Snapshot().BufferedCalls)
	// Nor after a force-open and back.
	during = func() { _ = f.b.TransitionTo(cb.ForcedOpen); f.b.Reset() }
	_, _ = call(context.Background(), struct{}{})
	assert.Equal(t, 0, f.b.Snapshot().BufferedCalls)
	require.Equal(t, cb.Closed, f.state())
}

func TestTransitionEventsInOrder(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowSize(2), cb.MinimumCalls(2), cb.WaitInOpen(10*time.Second),
		cb.PermittedInHalfOpen(1))
	f.clk.Advance(time.Second)
	f.do(fail, fail) // closed→open at 1s
	f.clk.Advance(10 * time.Second)
	f.do(fail) // open→half-open, half-open→open at 11s
	f.clk.Advance(10 * time.Second)
	f.do(ok) // open→half-open, half-open→closed at 21s
	_ = f.b.TransitionTo(cb.ForcedOpen)
	_ = f.b.TransitionTo(cb.Disabled)
	f.b.Reset()

	var got []string
	for _, e := range f.rec.all() {
		require.Equal(t, cb.EventTransition, e.Kind)
		require.Equal(t, "svc", e.Instance)
		got = append(got, fmt.Sprintf("%s→%s@%v", e.Attr("from").String(), e.Attr("to").String(), e.At))
	}
	assert.Equal(t, []string{
		"closed→open@1s",
		"open→half-open@11s", "half-open→open@11s",
		"open→half-open@21s", "half-open→closed@21s",
		"closed→forced-open@21s", "forced-open→disabled@21s", "disabled→closed@21s",
	}, got)
}

func TestRejectionEvents(t *testing.T) {
	f := openedBreaker(t, 1)
	f.clk.Advance(4 * time.Second)
	f.rejected()
	_ = f.b.TransitionTo(cb.ForcedOpen)
	f.rejected()

	var rejections []policy.Event
	for _, e := range f.rec.all() {
		if e.Kind == cb.EventRejected {
			rejections = append(rejections, e)
		}
	}
	require.Len(t, rejections, 2)
	assert.Equal(t, "svc", rejections[0].Instance)
	assert.Equal(t, 4*time.Second, rejections[0].At)
	assert.Equal(t, 6*time.Second, rejections[0].RetryAfter, "time left until half-open")
	assert.Zero(t, rejections[0].Wait, "a rejection holds no call")
	require.ErrorIs(t, rejections[0].Err, cb.ErrOpen)
	assert.Equal(t, 4*time.Second, rejections[1].At)
	assert.Zero(t, rejections[1].RetryAfter, "forced open: unknown")
	assert.Zero(t, rejections[1].Wait)
	var oe *cb.OpenError
	require.ErrorAs(t, rejections[1].Err, &oe)
	assert.Equal(t, cb.ForcedOpen, oe.State())
}

func TestSuccessesPublishNothing(t *testing.T) {
	f := newFixture(t)
	f.do(ok, ok, ok, fail)
	assert.Empty(t, f.rec.all())
}

func TestSnapshot(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowSize(5), cb.MinimumCalls(4), cb.FailureRateThreshold(60),
		cb.SlowCallThreshold(time.Second), cb.WaitInOpen(time.Minute), cb.PermittedInHalfOpen(4))
	assert.Equal(t, cb.Snapshot{Instance: "svc", State: cb.Closed, FailureRate: -1, SlowCallRate: -1},
		f.b.Snapshot())

	f.do(ok, fail, slow(time.Second+1, nil))
	assert.Equal(t, cb.Snapshot{Instance: "svc", State: cb.Closed, FailureRate: -1, SlowCallRate: -1,
		BufferedCalls: 3, FailedCalls: 1, SlowCalls: 1}, f.b.Snapshot())

	f.do(fail)
	assert.Equal(t, cb.Snapshot{Instance: "svc", State: cb.Closed, FailureRate: 50, SlowCallRate: 25,
		BufferedCalls: 4, FailedCalls: 2, SlowCalls: 1}, f.b.Snapshot())

	f.do(fail) // 3 of 5 = 60%: open; the snapshot shows the window that opened it
	f.rejected()
	f.rejected()
	assert.Equal(t, cb.Snapshot{Instance: "svc", State: cb.Open, FailureRate: 60, SlowCallRate: 20,
		BufferedCalls: 5, FailedCalls: 3, SlowCalls: 1, NotPermittedCalls: 2}, f.b.Snapshot())

	f.clk.Advance(time.Minute)
	f.do(ok, fail) // trials: the rates wait for all four
	assert.Equal(t, cb.Snapshot{Instance: "svc", State: cb.HalfOpen, FailureRate: -1, SlowCallRate: -1,
		BufferedCalls: 2, FailedCalls: 1}, f.b.Snapshot())
	f.do(fail, ok) // 2 of 4 = 50% < 60%
	assert.Equal(t, cb.Snapshot{Instance: "svc", State: cb.Closed, FailureRate: -1, SlowCallRate: -1},
		f.b.Snapshot())
	assert.Equal(t, "svc", f.b.Snapshot().Instance)

	// Reopened from half-open, the snapshot shows the trials.
	g := openedBreaker(t, 2)
	g.clk.Advance(10 * time.Second)
	g.do(fail, fail)
	assert.Equal(t, cb.Snapshot{Instance: "svc", State: cb.Open, FailureRate: 100, SlowCallRate: 0,
		BufferedCalls: 2, FailedCalls: 2}, g.b.Snapshot())
}

func TestRejectionError(t *testing.T) {
	f := openedBreaker(t, 1)
	rej := f.rejected()
	assert.Equal(t, "svc", rej.InstanceID())
	assert.Equal(t, cb.Open, rej.State())
	assert.Equal(t, `circuitbreaker: circuit breaker "svc" is open and does not permit the call`, rej.Error())
	assert.Same(t, rej, f.rejected(), "one preallocated rejection per breaker and state")

	// SPEC CO-4: whatever a retry's lists say, it never retries a breaker's rejection.
	var nr policy.NeverRetried
	require.ErrorAs(t, fmt.Errorf("wrapped: %w", rej), &nr)
	assert.True(t, nr.NeverRetried())
	require.ErrorAs(t, cb.ErrOpen, &nr)
	assert.True(t, nr.NeverRetried())

	assert.NotErrorIs(t, errBoom, cb.ErrOpen)
	assert.True(t, errors.Is(cb.ErrOpen, cb.ErrOpen))
}

func TestBreakerIDAndState(t *testing.T) {
	b := openedBreaker(t, 1).b
	assert.Equal(t, "svc", b.Snapshot().Instance)
	assert.Equal(t, cb.Open, b.Snapshot().State)
}

// SPEC CB-4: the rates are compared with the thresholds exactly, each threshold standing
// for the decimal written: 1 failure in 3 calls is 33.33...%, below a threshold of
// 33.333333333333336 (though 100/3 is 33.333333333333336 in float64), and at or above
// 33.33333333333333; the same for the slow-call rate of the half-open trials.
func TestCB4_RatesComparedWithThresholdsExactly(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowSize(3), cb.MinimumCalls(3), cb.FailureRateThreshold(33.333333333333336))
	f.do(fail, ok, ok)
	require.Equal(t, cb.Closed, f.state(), "33.33...% < 33.333333333333336%")

	f = newFixture(t, cb.SlidingWindowSize(3), cb.MinimumCalls(3), cb.FailureRateThreshold(33.33333333333333))
	f.do(fail, ok, ok)
	require.Equal(t, cb.Open, f.state(), "33.33...% ≥ 33.33333333333333%")

	f = openedBreaker(t, 3, cb.SlowCallThreshold(time.Second), cb.SlowCallRateThreshold(66.66666666666667))
	f.clk.Advance(10 * time.Second)
	f.do(slow(2*time.Second, nil), slow(2*time.Second, nil), ok)
	require.Equal(t, cb.Closed, f.state(), "2 of 3 trials slow: 66.66...% < 66.66666666666667%")
}
