package timeout_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy/observe"
	"github.com/resilience4go/resilience4go/policy/timeout"
)

var errBoom = errors.New("boom")

// observedTimeout builds a timeout of d on clk with id "Svc.Call", observed; it returns the
// instance's recorder.
func observedTimeout(t *testing.T, clk clock.Clock, d time.Duration, opts ...timeout.Option) (*timeout.Timeout, *contracttest.Observed) {
	t.Helper()
	obs := &contracttest.Observer{}
	to, err := timeout.New(d, append([]timeout.Option{timeout.WithClock(clk), timeout.Name("Svc.Call"),
		timeout.Observe(obs)}, opts...)...)
	require.NoError(t, err)
	require.True(t, obs.Made(timeout.Layer, "Svc.Call"), "the recorder is asked for when the timeout is built")
	return to, obs.Of(timeout.Layer, "Svc.Call")
}

// sleeper returns a function that sleeps d on clk (a manual clock moves on) and returns
// err.
func sleeper(clk *clock.Manual, d time.Duration, err error) decorate.Func[string, string] {
	return func(ctx context.Context, _ string) (string, error) {
		_ = clk.Sleep(ctx, d)
		return "v", err
	}
}

// OB-1: a synchronous call is recorded when it ends: succeeded or failed in time, timed
// out past its deadline (Err the *TimeoutError), with its latency on the policy's clock and
// the context it was given; TimeoutExceeded reaches the recorder with that context too.
func TestOB1_TimeoutRecordsSyncOutcomesWithLatency(t *testing.T) {
	clk := clock.NewManual()
	to, rec := observedTimeout(t, clk, 500*time.Millisecond)
	_, err := timeout.DecorateFunc(to, sleeper(clk, 200*time.Millisecond, nil))(contracttest.Marked("ok"), "")
	require.NoError(t, err)
	_, err = timeout.DecorateFunc(to, sleeper(clk, 100*time.Millisecond, errBoom))(contracttest.Marked("failed"), "")
	require.ErrorIs(t, err, errBoom)
	_, err = timeout.DecorateFunc(to, sleeper(clk, 600*time.Millisecond, nil))(contracttest.Marked("late"), "")
	require.ErrorIs(t, err, timeout.ErrTimeout)

	got := rec.Outcomes()
	require.Len(t, got, 3)
	assert.Equal(t, observe.Outcome{Result: observe.ResultSucceeded, Latency: 200 * time.Millisecond}, got[0])
	assert.Equal(t, observe.Outcome{Result: observe.ResultFailed, Latency: 100 * time.Millisecond, Err: errBoom}, got[1])
	assert.Equal(t, observe.ResultTimedOut, got[2].Result)
	assert.Equal(t, 600*time.Millisecond, got[2].Latency, "until the function returned")
	assert.Same(t, to.Err(), got[2].Err)
	assert.Equal(t, []any{"ok", "failed", "late"}, contracttest.Markers(rec.Contexts()))

	evs := rec.Events()
	require.Len(t, evs, 1)
	assert.Equal(t, timeout.EventExceeded, evs[0].Kind)
	assert.Equal(t, 500*time.Millisecond, evs[0].Attr("timeout").Duration())
	assert.Equal(t, "Svc.Call", evs[0].Instance)
	assert.Equal(t, []any{"late"}, contracttest.Markers(rec.EventContexts()))
}

// OB-1: on the system clock too, a call is recorded as succeeded or timed out, with the
// call's context; the latency of a timed-out call is at least its timeout.
func TestOB1_TimeoutRecordsSyncOutcomesOnTheSystemClock(t *testing.T) {
	to, rec := observedTimeout(t, clock.System(), 5*time.Millisecond)
	_, err := timeout.DecorateFunc(to, func(context.Context, int) (int, error) { return 1, nil })(contracttest.Marked("ok"), 0)
	require.NoError(t, err)
	_, err = timeout.DecorateFunc(to, func(ctx context.Context, _ int) (int, error) {
		<-ctx.Done() // ends at the deadline
		return 0, ctx.Err()
	})(contracttest.Marked("late"), 0)
	require.ErrorIs(t, err, timeout.ErrTimeout)

	got := rec.Outcomes()
	require.Len(t, got, 2)
	assert.Equal(t, observe.ResultSucceeded, got[0].Result)
	assert.NoError(t, got[0].Err)
	assert.GreaterOrEqual(t, got[0].Latency, time.Duration(0))
	assert.Equal(t, observe.ResultTimedOut, got[1].Result)
	assert.GreaterOrEqual(t, got[1].Latency, 5*time.Millisecond)
	assert.ErrorIs(t, got[1].Err, timeout.ErrTimeout)
	assert.Equal(t, []any{"ok", "late"}, contracttest.Markers(rec.Contexts()))
	assert.Equal(t, []any{"late"}, contracttest.Markers(rec.EventContexts()))
}

// OB-1: an asynchronous call is recorded when its future completes: in time (succeeded
// or failed), at the deadline (timed out, its latency the timeout exactly), or by Cancel
// (failed with async.ErrCanceled).
func TestOB1_TimeoutRecordsAsyncOutcomes(t *testing.T) {
	clk := clock.NewManual()
	to, rec := observedTimeout(t, clk, 500*time.Millisecond)
	var in innerCall
	call := timeout.DecorateAsyncFunc(to, in.next(false))

	fut := call(contracttest.Marked("ok"), "")
	clk.Advance(300 * time.Millisecond)
	assert.Empty(t, rec.Outcomes(), "nothing recorded before the future completes")
	in.complete("v", nil)
	_, err := requireDone(t, fut)
	require.NoError(t, err)

	fut = call(contracttest.Marked("failed"), "")
	clk.Advance(100 * time.Millisecond)
	in.complete("", errBoom)
	_, err = requireDone(t, fut)
	require.ErrorIs(t, err, errBoom)

	fut = call(contracttest.Marked("late"), "")
	clk.Advance(time.Second)
	_, err = requireDone(t, fut)
	require.ErrorIs(t, err, timeout.ErrTimeout)

	fut = call(contracttest.Marked("canceled"), "")
	clk.Advance(50 * time.Millisecond)
	fut.Cancel()

	assert.Equal(t, []observe.Outcome{
		{Result: observe.ResultSucceeded, Latency: 300 * time.Millisecond},
		{Result: observe.ResultFailed, Latency: 100 * time.Millisecond, Err: errBoom},
		{Result: observe.ResultTimedOut, Latency: 500 * time.Millisecond, Err: to.Err()},
		{Result: observe.ResultFailed, Latency: 50 * time.Millisecond, Err: async.ErrCanceled},
	}, rec.Outcomes())
	assert.Equal(t, []any{"ok", "failed", "late", "canceled"}, contracttest.Markers(rec.Contexts()))
	evs := rec.Events()
	require.Len(t, evs, 1)
	assert.Equal(t, timeout.EventExceeded, evs[0].Kind)
	assert.Equal(t, []any{"late"}, contracttest.Markers(rec.EventContexts()))
}

// OB-1: a call refused on arrival because its context was nil or done never runs and
// returns the context's error, not a rejection: nothing is recorded. Nor is a call that
// starts while the timeout is disabled, nor one through an instance without a recorder.
func TestOB1_TimeoutRecordsNothingForArrivalRefusalsDisabledOrWithoutRecorder(t *testing.T) {
	clk := clock.NewManual()
	to, rec := observedTimeout(t, clk, 500*time.Millisecond)
	done, cancel := context.WithCancel(contracttest.Marked("done"))
	cancel()
	_, err := timeout.DecorateFunc(to, sleeper(clk, 0, nil))(done, "")
	require.ErrorIs(t, err, context.Canceled)
	var in innerCall
	_, err = requireDone(t, timeout.DecorateAsyncFunc(to, in.next(false))(done, ""))
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, rec.Outcomes())
	assert.Empty(t, rec.Events())

	require.NoError(t, to.Reconfigure(timeout.Config{Duration: 500 * time.Millisecond, Disabled: true}))
	_, err = timeout.DecorateFunc(to, sleeper(clk, time.Second, nil))(contracttest.Marked("disabled"), "")
	require.NoError(t, err)
	fut := timeout.DecorateAsyncFunc(to, in.next(false))(contracttest.Marked("disabled"), "")
	in.complete("v", nil)
	_, err = requireDone(t, fut)
	require.NoError(t, err)
	assert.Empty(t, rec.Outcomes())
	assert.Equal(t, []any{nil}, contracttest.Markers(rec.EventContexts()), "only ConfigChanged, with no call's context")

	r := &recorder{}
	bare, err := timeout.New(500*time.Millisecond, timeout.WithClock(clk), timeout.Observe(&contracttest.NilObserver{}),
		timeout.OnEvent(r.listen))
	require.NoError(t, err)
	_, err = timeout.DecorateFunc(bare, sleeper(clk, time.Second, nil))(contracttest.Marked("bare"), "")
	require.ErrorIs(t, err, timeout.ErrTimeout)
	require.Len(t, r.events, 1, "the listener still gets TimeoutExceeded")
}

// OB-1: the clock is read for the latency only with a recorder: never on the path of a
// call timed by a clock other than the system's without one, twice with one.
func TestOB1_TimeoutReadsTheClockOnlyWhenRecording(t *testing.T) {
	for _, recording := range []bool{false, true} {
		t.Run(fmt.Sprint("recording=", recording), func(t *testing.T) {
			clk := contracttest.NewCountingClock(clock.NewManual())
			opts := []timeout.Option{timeout.WithClock(clk)}
			if recording {
				opts = append(opts, timeout.Observe(contracttest.NopObserver{}))
			}
			to, err := timeout.New(time.Second, opts...)
			require.NoError(t, err)
			want := 0
			if recording {
				want = 2
			}
			_, err = timeout.DecorateFunc(to, func(context.Context, int) (int, error) { return 1, nil })(context.Background(), 0)
			require.NoError(t, err)
			assert.Equal(t, want, clk.Reads(), "sync")
			clk.Reset()
			_, err = requireDone(t, timeout.DecorateAsyncFunc(to, func(context.Context, int) *async.Future[int] {
				return async.Completed(1)
			})(context.Background(), 0))
			require.NoError(t, err)
			assert.Equal(t, want, clk.Reads(), "async")
		})
	}
}

// OB-1: a recorder adds no allocation to a call (which allocates its context and timer
// either way), sync on the system and on a manual clock, and async.
func TestOB1_TimeoutRecorderAddsNoAllocation(t *testing.T) {
	ctx := context.Background()
	for name, clk := range map[string]clock.Clock{"manual": clock.NewManual(), "system": clock.System()} {
		t.Run(name, func(t *testing.T) {
			allocs := func(opts ...timeout.Option) (sync, async float64) {
				to, err := timeout.New(time.Hour, append([]timeout.Option{timeout.WithClock(clk)}, opts...)...)
				require.NoError(t, err)
				call := timeout.DecorateFunc(to, func(context.Context, int) (int, error) { return 1, nil })
				done := completedString("v")
				acall := timeout.DecorateAsyncFunc(to, func(context.Context, int) *asyncFuture { return done })
				return testing.AllocsPerRun(200, func() { _, _ = call(ctx, 0) }),
					testing.AllocsPerRun(200, func() { _ = acall(ctx, 0) })
			}
			plainSync, plainAsync := allocs()
			recSync, recAsync := allocs(timeout.Observe(contracttest.NopObserver{}))
			assert.Equal(t, plainSync, recSync, "sync")
			assert.Equal(t, plainAsync, recAsync, "async")
		})
	}
}

// BenchmarkSyncInTimeObserved is BenchmarkSyncInTime with a recorder that does nothing.
func BenchmarkSyncInTimeObserved(b *testing.B) {
	to := mustNew(b, time.Second, timeout.Observe(contracttest.NopObserver{}))
	call := timeout.DecorateFunc(to, func(ctx context.Context, n int) (int, error) { return n, nil })
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := call(ctx, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// OB-1: an async call whose function panics is over: its deadline passing later records
// no timeout and publishes no event.
func TestOB1_TimeoutAsyncPanicLeavesNoTimeoutBehind(t *testing.T) {
	clk := clock.NewManual()
	obs := &contracttest.Observer{}
	var events contracttest.Recorder
	to, err := timeout.New(time.Second, timeout.WithClock(clk), timeout.Name("timeout"), timeout.Observe(obs), timeout.OnEvent(events.Listen))
	require.NoError(t, err)
	call := timeout.DecorateAsyncFunc(to, func(context.Context, int) *async.Future[int] { panic("boom") })
	assert.PanicsWithValue(t, "boom", func() { _ = call(t.Context(), 0) })
	clk.Advance(2 * time.Second)
	assert.Empty(t, obs.Of(timeout.Layer, "timeout").Outcomes())
	assert.Empty(t, events.Events())
	assert.Zero(t, clk.PendingTasks(), "the deadline's timer is stopped")
}

// A sync call whose function panics is over too: its deadline's timer is stopped and its
// context canceled, on the manual clock and on the system clock, as for an async call
// (fault: both stayed until the deadline, an hour here).
func TestTimeoutSyncPanicLeavesNoTimerBehind(t *testing.T) {
	clk := clock.NewManual()
	for name, opts := range map[string][]timeout.Option{"manual clock": {timeout.WithClock(clk)}, "system clock": nil} {
		to, err := timeout.New(time.Hour, opts...)
		require.NoError(t, err)
		var seen context.Context
		call := timeout.DecorateFunc(to, func(ctx context.Context, _ int) (int, error) {
			seen = ctx
			panic("boom")
		})
		assert.PanicsWithValue(t, "boom", func() { _, _ = call(t.Context(), 0) }, name)
		require.NotNil(t, seen, name)
		assert.ErrorIs(t, seen.Err(), context.Canceled, "%s: the call's context is canceled", name)
	}
	assert.Zero(t, clk.PendingTasks(), "the deadline's timer is stopped")
}
