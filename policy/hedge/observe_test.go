package hedge_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// observedHedge builds a hedge on a manual clock with id "Svc.Call", observed; it returns
// the clock and the instance's recorder.
func observedHedge(t *testing.T, opts ...hedge.Option) (*hedge.Hedge, *clock.Manual, *contracttest.Observed) {
	t.Helper()
	clk := clock.NewManual()
	obs := &contracttest.Observer{}
	h, err := hedge.New(append([]hedge.Option{hedge.WithClock(clk), hedge.Name("Svc.Call"),
		hedge.Observe(obs)}, opts...)...)
	require.NoError(t, err)
	require.True(t, obs.Made(hedge.Layer, "Svc.Call"), "the recorder is asked for when the hedge is built")
	return h, clk, obs.Of(hedge.Layer, "Svc.Call")
}

// evKinds returns the kinds and attempts of the events, with the marker of each one's
// context.
func evKinds(rec *contracttest.Observed) []string {
	var out []string
	ctxs := rec.EventContexts()
	for i, e := range rec.Events() {
		out = append(out, fmt.Sprintf("%v#%d@%v", e.Kind, e.Attempt, contracttest.MarkOf(ctxs[i])))
	}
	return out
}

// OB-1: a call settled by its first attempt at once is recorded as it returns: one
// attempt, its latency, its error.
func TestOB1_HedgeRecordsCallsSettledAtOnce(t *testing.T) {
	h, clk, rec := observedHedge(t, hedge.On(errHedge))
	_, err := result(t, hedge.DecorateAsyncFunc(h, newDep(clk, step{now: true, v: "v"}).call)(contracttest.Marked("ok"), ""))
	require.NoError(t, err)
	_, err = result(t, hedge.DecorateAsyncFunc(h, newDep(clk, failsNow(errOther)).call)(contracttest.Marked("failed"), ""))
	require.ErrorIs(t, err, errOther)
	assert.Equal(t, []observe.Outcome{
		{Result: observe.ResultSucceeded, Attempts: 1},
		{Result: observe.ResultFailed, Attempts: 1, Err: errOther},
	}, rec.Outcomes())
	assert.Equal(t, []any{"ok", "failed"}, contracttest.Markers(rec.Contexts()))
	assert.Empty(t, rec.Events())
}

// OB-1: a hedged call is recorded when it ends, with the attempts started and its latency
// from its arrival; its Hedged, HedgeWon and HedgeFailed events reach the recorder with
// the call's context.
func TestOB1_HedgeRecordsHedgedCalls(t *testing.T) {
	h, clk, rec := observedHedge(t, hedge.Delay(time.Second), hedge.MaxAttempts(3))
	won := hedge.DecorateAsyncFunc(h, newDep(clk, ok(3*time.Second, "slow"), ok(100*time.Millisecond, "fast")).call)
	f := won(contracttest.Marked("won"), "")
	clk.Advance(time.Second)
	assert.Empty(t, rec.Outcomes(), "nothing recorded while the call goes on")
	clk.Advance(100 * time.Millisecond)
	v, err := result(t, f)
	require.NoError(t, err)
	require.Equal(t, "fast", v)

	failed := hedge.DecorateAsyncFunc(h, newDep(clk, fails(200*time.Millisecond, errHedge)).call)
	f = failed(contracttest.Marked("failed"), "")
	clk.Advance(time.Second)
	_, err = result(t, f)
	require.ErrorIs(t, err, errHedge)

	assert.Equal(t, []observe.Outcome{
		{Result: observe.ResultSucceeded, Attempts: 2, Latency: 1100 * time.Millisecond},
		{Result: observe.ResultFailed, Attempts: 3, Latency: 600 * time.Millisecond, Err: errHedge},
	}, rec.Outcomes())
	assert.Equal(t, []any{"won", "failed"}, contracttest.Markers(rec.Contexts()))
	assert.Equal(t, []string{
		"Hedged#2@won", "HedgeWon#2@won",
		"Hedged#2@failed", "Hedged#3@failed", "HedgeFailed#3@failed",
	}, evKinds(rec))
}

// OB-1: HedgeSkipped reaches the recorder with the call's context; a call ended by Cancel
// on its future, or by its context, is recorded as failed, with the attempts started.
func TestOB1_HedgeRecordsSkipsCancelAndContextEnd(t *testing.T) {
	h, clk, rec := observedHedge(t, hedge.Delay(time.Second), hedge.BudgetPercent(0), hedge.BudgetMinPerSecond(0))
	call := hedge.DecorateAsyncFunc(h, newDep(clk, ok(2*time.Second, "v")).call)
	f := call(contracttest.Marked("skipped"), "")
	clk.Advance(2 * time.Second)
	_, err := result(t, f)
	require.NoError(t, err)

	never := hedge.DecorateAsyncFunc(h, newDep(clk, never()).call)
	f = never(contracttest.Marked("canceled"), "")
	clk.Advance(300 * time.Millisecond)
	f.Cancel()

	ctx, cancel := context.WithCancel(contracttest.Marked("context"))
	defer cancel()
	f = never(ctx, "")
	clk.Advance(400 * time.Millisecond)
	cancel()
	_, err = f.Await(context.Background())
	require.ErrorIs(t, err, context.Canceled)

	got := rec.Outcomes()
	assert.Equal(t, []observe.Outcome{
		{Result: observe.ResultSucceeded, Attempts: 1, Latency: 2 * time.Second},
		{Result: observe.ResultFailed, Attempts: 1, Latency: 300 * time.Millisecond, Err: async.ErrCanceled},
		{Result: observe.ResultFailed, Attempts: 1, Latency: 400 * time.Millisecond, Err: context.Canceled},
	}, got)
	assert.Equal(t, []any{"skipped", "canceled", "context"}, contracttest.Markers(rec.Contexts()))
	assert.Equal(t, []string{"HedgeSkipped#2@skipped"}, evKinds(rec))
}

// OB-1: a call refused on arrival because its context was nil or done starts nothing and
// returns the context's error, not a rejection: nothing is recorded. Nor is a call through
// a disabled hedge, nor one through an instance without a recorder.
func TestOB1_HedgeRecordsNothingForArrivalRefusalsDisabledOrWithoutRecorder(t *testing.T) {
	h, clk, rec := observedHedge(t)
	done, cancel := context.WithCancel(contracttest.Marked("done"))
	cancel()
	_, err := result(t, hedge.DecorateAsyncFunc(h, newDep(clk, step{now: true, v: "v"}).call)(done, ""))
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, rec.Outcomes())

	obs := &contracttest.Observer{}
	off, err := hedge.New(hedge.WithClock(clk), hedge.Name("off"), hedge.Observe(obs), hedge.Enabled(false))
	require.NoError(t, err)
	_, err = result(t, hedge.DecorateAsyncFunc(off, newDep(clk, failsNow(errHedge)).call)(contracttest.Marked("disabled"), ""))
	require.ErrorIs(t, err, errHedge)
	assert.Empty(t, obs.Of(hedge.Layer, "off").Outcomes())

	r := &contracttest.Recorder{}
	bare, err := hedge.New(hedge.WithClock(clk), hedge.Observe(&contracttest.NilObserver{}), hedge.OnEvent(r.Listen), hedge.Delay(time.Second))
	require.NoError(t, err)
	f := hedge.DecorateAsyncFunc(bare, newDep(clk, ok(3*time.Second, "slow"), ok(100*time.Millisecond, "fast")).call)(contracttest.Marked("bare"), "")
	clk.Advance(1100 * time.Millisecond)
	_, err = result(t, f)
	require.NoError(t, err)
	assert.Len(t, r.Events(), 2, "the listener still gets Hedged and HedgeWon")
}

// OB-1: the hedge reads the clock at a call's arrival; the end is read only for a
// recorder.
func TestOB1_HedgeReadsTheClockForLatencyOnlyWhenRecording(t *testing.T) {
	for _, recording := range []bool{false, true} {
		t.Run(fmt.Sprint("recording=", recording), func(t *testing.T) {
			clk := contracttest.NewCountingClock(clock.NewManual())
			opts := []hedge.Option{hedge.WithClock(clk), hedge.Budget(false)}
			if recording {
				opts = append(opts, hedge.Observe(contracttest.NopObserver{}))
			}
			h, err := hedge.New(opts...)
			require.NoError(t, err)
			_, err = result(t, hedge.DecorateAsyncFunc(h, answer)(context.Background(), 1))
			require.NoError(t, err)
			want := 1
			if recording {
				want = 2
			}
			assert.Equal(t, want, clk.Reads())
		})
	}
}

// OB-1: a recorder adds no allocation to a call settled by its first attempt at once,
// which allocates its attempt's context only.
func TestOB1_HedgeRecorderAddsNoAllocation(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	ctx := context.Background()
	for _, opts := range [][]hedge.Option{nil, {hedge.Budget(false)}} {
		h, err := hedge.New(append(opts, hedge.Observe(contracttest.NopObserver{}))...)
		require.NoError(t, err)
		call := hedge.DecorateAsyncFunc(h, answer)
		allocs := testing.AllocsPerRun(1000, func() {
			if _, _, err := call(ctx, 1).Result(); err != nil {
				t.Fatal(err)
			}
		})
		assert.LessOrEqual(t, allocs, 1.0)
	}
}

// BenchmarkHedge_FirstAttemptWinsObserved is BenchmarkHedge_FirstAttemptWins (no budget)
// with a recorder that does nothing.
func BenchmarkHedge_FirstAttemptWinsObserved(b *testing.B) {
	call := hedge.DecorateAsyncFunc(mustNew(b, hedge.Budget(false), hedge.Observe(contracttest.NopObserver{})), answer)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		if v, _, err := call(ctx, 1).Result(); err != nil || v != 42 {
			b.Fatal(v, err)
		}
	}
}
