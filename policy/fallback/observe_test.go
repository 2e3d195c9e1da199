package fallback_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/policy/fallback"
)

// OB-1: a fallback records no outcome; its FallbackApplied events reach the recorder with
// the context of the call whose error it replaced, sync and async (completed at once, and
// later).
func TestOB1_FallbackPublishesAppliedWithTheCallsContextAndRecordsNoOutcome(t *testing.T) {
	obs := &contracttest.Observer{}
	f := newFallback(t, fallback.Name("svc"), fallback.WithClock(clock.NewManual()), fallback.Observe(obs))
	require.True(t, obs.Made(fallback.Layer, "svc"), "the recorder is asked for when the fallback is built")
	rec := obs.Of(fallback.Layer, "svc")

	v, err := fallback.DecorateFunc(f, failWith(errBoom))(contracttest.Marked("sync"), "q")
	require.NoError(t, err)
	require.Equal(t, "cached (boom)", v)
	_, err = fallback.DecorateFunc(f, failWith(nil))(contracttest.Marked("ok"), "q")
	require.NoError(t, err)

	failedNow := async.Failed[string](errBoom)
	fut := fallback.DecorateAsyncFunc(f, func(context.Context, string) *async.Future[string] { return failedNow })(contracttest.Marked("async now"), "q")
	v, err = fut.Await(context.Background())
	require.NoError(t, err)
	require.Equal(t, "cached (boom)", v)

	inner, complete := async.NewPromise[string]()
	fut = fallback.DecorateAsyncFunc(f, func(context.Context, string) *async.Future[string] { return inner })(contracttest.Marked("async later"), "q")
	complete("", errOther)
	v, err = fut.Await(context.Background())
	require.NoError(t, err)
	require.Equal(t, "cached (other)", v)

	assert.Empty(t, rec.Outcomes(), "a fallback records no outcome")
	evs := rec.Events()
	require.Len(t, evs, 3)
	var marks []any
	for i, ctx := range rec.EventContexts() {
		assert.Equal(t, fallback.EventApplied, evs[i].Kind)
		assert.Equal(t, "svc", evs[i].Instance)
		marks = append(marks, contracttest.MarkOf(ctx))
	}
	assert.Equal(t, []any{"sync", "async now", "async later"}, marks)
	assert.ErrorIs(t, evs[0].Err, errBoom)
	assert.ErrorIs(t, evs[2].Err, errOther)
}

// OB-1: a call refused on arrival because its context was nil or done, a call through a
// disabled fallback, and an instance without a recorder record nothing; the listener still
// gets its events.
func TestOB1_FallbackRecordsNothingForArrivalRefusalsDisabledOrWithoutRecorder(t *testing.T) {
	obs := &contracttest.Observer{}
	f := newFallback(t, fallback.Name("svc"), fallback.Observe(obs))
	rec := obs.Of(fallback.Layer, "svc")
	done, cancel := context.WithCancel(contracttest.Marked("done"))
	cancel()
	_, err := fallback.DecorateFunc(f, failWith(errBoom))(done, "q")
	require.ErrorIs(t, err, context.Canceled)
	off := newFallback(t, fallback.Name("off"), fallback.Observe(obs), fallback.Enabled(false))
	_, err = fallback.DecorateFunc(off, failWith(errBoom))(contracttest.Marked("disabled"), "q")
	require.ErrorIs(t, err, errBoom)
	assert.Empty(t, rec.Events())
	assert.Empty(t, obs.Of(fallback.Layer, "off").Events())

	ev := &events{}
	bare := newFallback(t, fallback.Observe(&contracttest.NilObserver{}), fallback.OnEvent(ev.listen))
	_, err = fallback.DecorateFunc(bare, failWith(errBoom))(contracttest.Marked("bare"), "q")
	require.NoError(t, err)
	assert.Len(t, ev.get(), 1)
}

// OB-1: with a recorder attached, a success, an ignored error and a handled one allocate
// nothing more than without (a handled error: what the fallback function allocates).
func TestOB1_FallbackRecorderAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	f := newFallback(t, fallback.IgnoreOn(errOther), fallback.Observe(contracttest.NopObserver{}))
	ok := fallback.DecorateFunc(f, failWith(nil))
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = ok(ctx, "") }), "success")
	ignored := fallback.DecorateFunc(f, func(context.Context, string) (string, error) { return "", errOther })
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = ignored(ctx, "") }), "an ignored error")
	constant, err := fallback.New(func(context.Context, error) (string, error) { return "default", nil },
		fallback.Observe(contracttest.NopObserver{}))
	require.NoError(t, err)
	handled := fallback.DecorateFunc(constant, func(context.Context, string) (string, error) { return "", errBoom })
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = handled(ctx, "") }), "a handled error")
	done := async.Completed("v")
	aok := fallback.DecorateAsyncFunc(f, func(context.Context, string) *async.Future[string] { return done })
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = aok(ctx, "") }), "async: completed success")
}
