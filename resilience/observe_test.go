package resilience_test

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
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// OB-5: a registry with an observer records each whole call once, under observe.LayerCall
// and the wrap's id: success, failure, and a rejection with the layer that refused it,
// each with its latency on the registry's clock and the call's own context.
func TestOB5_WholeCallOutcomes(t *testing.T) {
	clk := clock.NewManual()
	obs := &contracttest.Observer{}
	reg, err := resilience.NewRegistry(resilience.WithClock(clk), resilience.WithObserver(obs))
	require.NoError(t, err)
	boom := errors.New("boom")
	call, err := resilience.Wrap1(reg, "API.Get", func(_ context.Context, fail bool) (int, error) {
		clk.Advance(30 * time.Millisecond)
		if fail {
			return 0, boom
		}
		return 1, nil
	}, resilience.RateLimiter(ratelimit.Permits(2), ratelimit.Period(time.Hour)))
	require.NoError(t, err)

	ctx := contracttest.Mark(t.Context(), "marker")
	_, err = call(ctx, false)
	require.NoError(t, err)
	_, err = call(ctx, true)
	require.ErrorIs(t, err, boom)
	_, err = call(ctx, false)
	require.ErrorIs(t, err, ratelimit.ErrExceeded)

	rec := obs.Of(observe.LayerCall, "API.Get")
	got := rec.Outcomes()
	require.Len(t, got, 3)
	assert.Equal(t, observe.Outcome{Result: observe.ResultSucceeded, Latency: 30 * time.Millisecond}, got[0])
	assert.Equal(t, observe.ResultFailed, got[1].Result)
	assert.Equal(t, 30*time.Millisecond, got[1].Latency)
	assert.ErrorIs(t, got[1].Err, boom)
	assert.Equal(t, observe.ResultRejected, got[2].Result)
	assert.Equal(t, ratelimit.Layer, got[2].RejectedBy)
	assert.Zero(t, got[2].Latency, "a rejected call never reached the function")
	assert.ErrorIs(t, got[2].Err, ratelimit.ErrExceeded)
	for _, c := range rec.Contexts() {
		assert.Equal(t, "marker", contracttest.MarkOf(c), "the recorder gets the call's context")
	}
	assert.True(t, obs.Made(ratelimit.Layer, "API.Get"), "the limiter's recorder is asked for too")
}

// OB-5: a call returning a future is recorded when the future completes, with the time
// until then.
func TestOB5_WholeCallOutcomesAsync(t *testing.T) {
	clk := clock.NewManual()
	obs := &contracttest.Observer{}
	reg, err := resilience.NewRegistry(resilience.WithClock(clk), resilience.WithObserver(obs))
	require.NoError(t, err)
	f, complete := async.NewPromise[int]()
	call, err := resilience.WrapAsync(reg, "API.Async", func(context.Context) *async.Future[int] { return f })
	require.NoError(t, err)
	out := call(t.Context())
	rec := obs.Of(observe.LayerCall, "API.Async")
	assert.Empty(t, rec.Outcomes(), "nothing is recorded before the future completes")
	clk.Advance(40 * time.Millisecond)
	complete(7, nil)
	v, err := out.Await(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	assert.Equal(t, []observe.Outcome{{Result: observe.ResultSucceeded, Latency: 40 * time.Millisecond}}, rec.Outcomes())
}

// OB-5: a pipeline's calls are recorded under its id, sync and async.
func TestOB5_PipelineOutcomes(t *testing.T) {
	obs := &contracttest.Observer{}
	reg, err := resilience.NewRegistry(resilience.WithClock(clock.NewManual()), resilience.WithObserver(obs))
	require.NoError(t, err)
	p, err := resilience.NewPipeline[int](reg, "pipe", resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Hour)))
	require.NoError(t, err)
	_, err = p.Execute(t.Context(), func(context.Context) (int, error) { return 1, nil })
	require.NoError(t, err)
	_, err = p.ExecuteAsync(t.Context(), func(context.Context) *async.Future[int] { return async.Completed(2) }).Await(t.Context())
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.Equal(t, []observe.Result{observe.ResultSucceeded, observe.ResultRejected}, obs.Of(observe.LayerCall, "pipe").Results())
}

// OB-5: without an observer no recorder exists, and a user's policy may not take the
// name under which whole calls are recorded (R4C-REG-010), nor may an order name it
// (R4C-REG-011).
func TestOB5_LayerCallIsReserved(t *testing.T) {
	reg, err := resilience.NewRegistry()
	require.NoError(t, err)
	_, err = resilience.Wrap(reg, "x", func(context.Context) (string, error) { return "", nil },
		resilience.Use[string](tagger{layer: observe.LayerCall}))
	assert.ErrorIs(t, err, &policy.ConfigError{Code: r4c.BadSpec})
	_, err = resilience.Wrap(reg, "y", func(context.Context) (string, error) { return "", nil },
		resilience.Order(observe.LayerCall))
	assert.ErrorIs(t, err, &policy.ConfigError{Code: r4c.BadOrder})
}

// OB-1: with an observer attached, admitted and rejected calls through a rate limiter
// still allocate nothing.
func TestOB1_ObservedCallsAllocateNothing(t *testing.T) {
	reg, err := resilience.NewRegistry(resilience.WithClock(clock.NewManual()), resilience.WithObserver(contracttest.NopObserver{}))
	require.NoError(t, err)
	call, err := resilience.Wrap(reg, "alloc", func(context.Context) (int, error) { return 1, nil },
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Hour)))
	require.NoError(t, err)
	ctx := t.Context()
	_, err = call(ctx)
	require.NoError(t, err)
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = call(ctx) }), "rejected")
}

// untimedObserver hands out recorders that keep outcomes and want no latencies.
type untimedObserver struct{ contracttest.Observer }

func (o *untimedObserver) Instrument(l policy.Layer, id string) observe.Recorder {
	return untimedRec{o.Of(l, id)}
}

type untimedRec struct{ *contracttest.Observed }

func (untimedRec) Untimed() bool { return true }

// OB-1: a whole call's recorder that wants no latencies costs no clock read, and its
// outcomes have no latency.
func TestOB1_UntimedRecorderReadsNoClock(t *testing.T) {
	for _, timed := range []bool{false, true} {
		manual := clock.NewManual()
		clk := contracttest.NewCountingClock(manual)
		var obs observe.Observer = &untimedObserver{}
		if timed {
			obs = &contracttest.Observer{}
		}
		reg, err := resilience.NewRegistry(resilience.WithClock(clk), resilience.WithObserver(obs))
		require.NoError(t, err)
		call, err := resilience.Wrap(reg, "plain", func(context.Context) (int, error) {
			manual.Advance(time.Second)
			return 1, nil
		})
		require.NoError(t, err)
		_, err = call(t.Context())
		require.NoError(t, err)
		var rec *contracttest.Observed
		if timed {
			rec = obs.(*contracttest.Observer).Of(observe.LayerCall, "plain")
			assert.Equal(t, 2, clk.Reads(), "start and end")
			assert.Equal(t, time.Second, rec.Outcomes()[0].Latency)
		} else {
			rec = obs.(*untimedObserver).Of(observe.LayerCall, "plain")
			assert.Zero(t, clk.Reads())
			assert.Equal(t, []observe.Outcome{{Result: observe.ResultSucceeded}}, rec.Outcomes())
		}
	}
}

// OB-5: a call with a nil context is recorded with context.Background(), and a call that
// panics is recorded once, as failed, before its panic goes on: sync and async.
func TestOB5_NilContextAndPanicsAreRecorded(t *testing.T) {
	obs := &contracttest.Observer{}
	reg, err := resilience.NewRegistry(resilience.WithClock(clock.NewManual()), resilience.WithObserver(obs))
	require.NoError(t, err)
	plain, err := resilience.Wrap(reg, "S.Nil", func(context.Context) (int, error) { return 1, nil })
	require.NoError(t, err)
	var none context.Context // a nil context, on purpose
	_, _ = plain(none)
	rec := obs.Of(observe.LayerCall, "S.Nil")
	require.Len(t, rec.Contexts(), 1)
	assert.NotNil(t, rec.Contexts()[0])

	boom, err := resilience.Wrap(reg, "S.Panic", func(context.Context) (int, error) { panic("boom") })
	require.NoError(t, err)
	assert.PanicsWithValue(t, "boom", func() { _, _ = boom(t.Context()) })
	assert.Equal(t, []observe.Outcome{{Result: observe.ResultFailed}}, obs.Of(observe.LayerCall, "S.Panic").Outcomes())

	boomAsync, err := resilience.WrapAsync(reg, "S.PanicAsync", func(context.Context) *async.Future[int] { panic("boom") })
	require.NoError(t, err)
	assert.PanicsWithValue(t, "boom", func() { _ = boomAsync(t.Context()) })
	assert.Equal(t, []observe.Outcome{{Result: observe.ResultFailed}}, obs.Of(observe.LayerCall, "S.PanicAsync").Outcomes())
}

// OB-5: a rejection by a layer of another composition (a wrapped function this one calls)
// is a failure of this one, not a rejection by a layer it does not have.
func TestOB5_RejectionsOfAnotherCompositionAreFailures(t *testing.T) {
	obs := &contracttest.Observer{}
	reg, err := resilience.NewRegistry(resilience.WithClock(clock.NewManual()), resilience.WithObserver(obs))
	require.NoError(t, err)
	inner, err := resilience.Wrap(reg, "Store.Get", func(context.Context) (int, error) { return 1, nil },
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Hour)))
	require.NoError(t, err)
	outer, err := resilience.Wrap(reg, "Handler.Serve", inner,
		resilience.RateLimiter(ratelimit.Permits(5), ratelimit.Period(time.Hour)))
	require.NoError(t, err)
	_, err = outer(t.Context())
	require.NoError(t, err)
	_, err = outer(t.Context())
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	got := obs.Of(observe.LayerCall, "Handler.Serve").Outcomes()
	require.Len(t, got, 2)
	assert.Equal(t, observe.ResultFailed, got[1].Result, "the inner limiter refused it, not the outer one")
	assert.Empty(t, got[1].RejectedBy)
	assert.Equal(t, observe.ResultRejected, obs.Of(observe.LayerCall, "Store.Get").Outcomes()[1].Result)
}

// OB-5: a pipeline whose hedge refuses Execute records nothing for it: no call was made.
func TestOB5_RefusedExecuteIsNotRecorded(t *testing.T) {
	obs := &contracttest.Observer{}
	reg, err := resilience.NewRegistry(resilience.WithClock(clock.NewManual()), resilience.WithObserver(obs))
	require.NoError(t, err)
	p, err := resilience.NewPipeline[int](reg, "PH", resilience.Hedge())
	require.NoError(t, err)
	_, err = p.Execute(t.Context(), func(context.Context) (int, error) { return 1, nil })
	require.ErrorIs(t, err, &policy.ConfigError{Code: "R4C-HDG-001"})
	assert.Empty(t, obs.Of(observe.LayerCall, "PH").Outcomes())
}
