package retry_test

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
	"github.com/resilience4go/resilience4go/policy/observe"
	"github.com/resilience4go/resilience4go/policy/retry"
)

// observedRetry builds a retry on clk with id "svc", observed; it returns the instance's
// recorder.
func observedRetry(t *testing.T, clk clock.Clock, opts ...retry.Option) (*retry.Retry, *contracttest.Observed) {
	t.Helper()
	obs := &contracttest.Observer{}
	r := newRetry(t, append([]retry.Option{retry.WithClock(clk), retry.Name("svc"), retry.Observe(obs),
		retry.Delay(time.Second)}, opts...)...)
	require.True(t, obs.Made(retry.Layer, "svc"), "the recorder is asked for when the retry is built")
	return r, obs.Of(retry.Layer, "svc")
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

var errAbort = errors.New("abort")

// OB-1: each synchronous call is recorded once it ends: a success with the attempts it
// took, a failure when every attempt was made, an abort on an outcome not retried; each
// with the error it returns and the context it was given, and its events with that
// context too.
func TestOB1_RetryRecordsSyncOutcomesWithAttempts(t *testing.T) {
	clk := clock.NewManual()
	r, rec := observedRetry(t, clk, retry.MaxAttempts(3), retry.AbortOn(errAbort))
	do := func(mark string, errs ...error) error {
		fn := &recorder{clk: clk, errs: errs}
		_, err := retry.DecorateFunc(r, fn.call)(contracttest.Marked(mark), struct{}{})
		return err
	}
	require.NoError(t, do("first", nil))
	require.NoError(t, do("third", errBoom, errBoom, nil))
	require.ErrorIs(t, do("exhausted", errBoom), errBoom)
	require.ErrorIs(t, do("aborted", errBoom, errAbort), errAbort)

	assert.Equal(t, []observe.Outcome{
		{Result: observe.ResultSucceeded, Attempts: 1},
		{Result: observe.ResultSucceeded, Attempts: 3},
		{Result: observe.ResultFailed, Attempts: 3, Err: errBoom},
		{Result: observe.ResultAborted, Attempts: 2, Err: errAbort},
	}, rec.Outcomes())
	assert.Equal(t, []any{"first", "third", "exhausted", "aborted"}, contracttest.Markers(rec.Contexts()))
	assert.Equal(t, []string{
		"RetryAttempt#1@third", "RetryAttempt#2@third",
		"RetryAttempt#1@exhausted", "RetryAttempt#2@exhausted", "RetryExhausted#3@exhausted",
		"RetryAttempt#1@aborted", "RetryAborted#2@aborted",
	}, evKinds(rec))
}

// OB-1: a context that ends between attempts aborts the call, recorded with the attempts
// made and the error that matches both the last attempt's and the context's; a result
// RetryIf retries, returned with its nil error when the attempts run out, is a failure
// with no error.
func TestOB1_RetryRecordsContextEndAndRetryIfExhaustion(t *testing.T) {
	clk := clock.NewManual()
	r, rec := observedRetry(t, clk, retry.MaxAttempts(2), retry.If(func(v int, _ error) bool { return v < 0 }))

	ctx, cancel := context.WithCancel(contracttest.Marked("canceled"))
	defer cancel()
	_, err := retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) {
		cancel()
		return 0, errBoom
	})(ctx, struct{}{})
	require.ErrorIs(t, err, errBoom)
	require.ErrorIs(t, err, context.Canceled)

	v, err := retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) { return -1, nil })(contracttest.Marked("retryIf"), struct{}{})
	require.NoError(t, err)
	require.Equal(t, -1, v)

	got := rec.Outcomes()
	require.Len(t, got, 2)
	assert.Equal(t, observe.ResultAborted, got[0].Result)
	assert.Equal(t, 1, got[0].Attempts)
	assert.ErrorIs(t, got[0].Err, errBoom)
	assert.ErrorIs(t, got[0].Err, context.Canceled)
	assert.Equal(t, observe.Outcome{Result: observe.ResultFailed, Attempts: 2}, got[1])
	assert.Equal(t, []any{"canceled", "retryIf"}, contracttest.Markers(rec.Contexts()))
	assert.Equal(t, []string{"RetryAborted#1@canceled", "RetryAttempt#1@retryIf"}, evKinds(rec))
}

// OB-1: a context that ends while the retry sleeps aborts the call: recorded with the
// attempts made, with the call's context.
func TestOB1_RetryRecordsContextEndDuringTheWait(t *testing.T) {
	clk := clock.NewManual()
	r, rec := observedRetry(t, clk, retry.MaxAttempts(3))
	ctx, cancel := context.WithCancel(contracttest.Marked("wait"))
	defer cancel()
	clk.AfterFunc(500*time.Millisecond, cancel) // during the first wait
	_, err := retry.DecorateFunc(r, (&recorder{clk: clk, errs: []error{errBoom}}).call)(ctx, struct{}{})
	require.ErrorIs(t, err, context.Canceled)
	got := rec.Outcomes()
	require.Len(t, got, 1)
	assert.Equal(t, observe.ResultAborted, got[0].Result)
	assert.Equal(t, 1, got[0].Attempts)
	assert.ErrorIs(t, got[0].Err, errBoom)
	assert.ErrorIs(t, got[0].Err, context.Canceled)
	assert.Equal(t, []string{"RetryAttempt#1@wait", "RetryAborted#1@wait"}, evKinds(rec))
}

// OB-1: asynchronous calls are recorded as synchronous ones, when their future completes:
// a first attempt already complete at once, and calls whose attempts are scheduled on the
// clock.
func TestOB1_RetryRecordsAsyncOutcomes(t *testing.T) {
	clk := clock.NewManual()
	r, rec := observedRetry(t, clk, retry.MaxAttempts(3), retry.AbortOn(errAbort))

	ok := retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] { return async.Completed(1) })
	_, err := settled(t, ok(contracttest.Marked("at once"), struct{}{}))
	require.NoError(t, err)
	aborted := retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] { return async.Failed[int](errAbort) })
	_, err = settled(t, aborted(contracttest.Marked("aborted at once"), struct{}{}))
	require.ErrorIs(t, err, errAbort)

	fn := &asyncFn{clk: clk}
	call := retry.DecorateAsyncFunc(r, fn.call)
	fut := call(contracttest.Marked("second"), struct{}{})
	fn.last().complete(0, errBoom)
	assert.Len(t, rec.Outcomes(), 2, "nothing recorded while the call goes on")
	clk.Advance(time.Second)
	fn.last().complete(7, nil)
	v, err := settled(t, fut)
	require.NoError(t, err)
	require.Equal(t, 7, v)

	fut = call(contracttest.Marked("exhausted"), struct{}{})
	for range 3 {
		fn.last().complete(0, errBoom)
		clk.Advance(time.Second)
	}
	_, err = settled(t, fut)
	require.ErrorIs(t, err, errBoom)

	fut = call(contracttest.Marked("aborted"), struct{}{})
	fn.last().complete(0, errBoom)
	clk.Advance(time.Second)
	fn.last().complete(0, errAbort)
	_, err = settled(t, fut)
	require.ErrorIs(t, err, errAbort)

	assert.Equal(t, []observe.Outcome{
		{Result: observe.ResultSucceeded, Attempts: 1},
		{Result: observe.ResultAborted, Attempts: 1, Err: errAbort},
		{Result: observe.ResultSucceeded, Attempts: 2},
		{Result: observe.ResultFailed, Attempts: 3, Err: errBoom},
		{Result: observe.ResultAborted, Attempts: 2, Err: errAbort},
	}, rec.Outcomes())
	assert.Equal(t, []any{"at once", "aborted at once", "second", "exhausted", "aborted"}, contracttest.Markers(rec.Contexts()))
	assert.Equal(t, []string{
		"RetryAborted#1@aborted at once",
		"RetryAttempt#1@second",
		"RetryAttempt#1@exhausted", "RetryAttempt#2@exhausted", "RetryExhausted#3@exhausted",
		"RetryAttempt#1@aborted", "RetryAborted#2@aborted",
	}, evKinds(rec))
}

// OB-1: an asynchronous call ended by Cancel on its future, or by its context during a
// wait, is recorded as aborted, with the attempts started.
func TestOB1_RetryRecordsAsyncCancelAndContextEnd(t *testing.T) {
	clk := clock.NewManual()
	r, rec := observedRetry(t, clk, retry.MaxAttempts(3))
	fn := &asyncFn{clk: clk}
	call := retry.DecorateAsyncFunc(r, fn.call)

	fut := call(contracttest.Marked("cancel in flight"), struct{}{})
	fn.last().complete(0, errBoom)
	clk.Advance(time.Second)
	require.Equal(t, 2, fn.n())
	fut.Cancel()

	fut = call(contracttest.Marked("cancel waiting"), struct{}{})
	fn.last().complete(0, errBoom)
	fut.Cancel()

	ctx, cancel := context.WithCancel(contracttest.Marked("context"))
	defer cancel()
	fut = call(ctx, struct{}{})
	fn.last().complete(0, errBoom)
	cancel()
	_, err := await(t, fut)
	require.ErrorIs(t, err, context.Canceled)

	got := rec.Outcomes()
	require.Len(t, got, 3)
	assert.Equal(t, observe.Outcome{Result: observe.ResultAborted, Attempts: 2, Err: async.ErrCanceled}, got[0])
	assert.Equal(t, observe.Outcome{Result: observe.ResultAborted, Attempts: 1, Err: async.ErrCanceled}, got[1])
	assert.Equal(t, observe.ResultAborted, got[2].Result)
	assert.Equal(t, 1, got[2].Attempts)
	assert.ErrorIs(t, got[2].Err, errBoom)
	assert.ErrorIs(t, got[2].Err, context.Canceled)
	assert.Equal(t, []any{"cancel in flight", "cancel waiting", "context"}, contracttest.Markers(rec.Contexts()))
	assert.Equal(t, []string{"RetryAttempt#1@cancel in flight", "RetryAttempt#1@cancel waiting",
		"RetryAttempt#1@context", "RetryAborted#1@context"}, evKinds(rec), "a canceled call publishes no end event")
}

// OB-1: a call refused on arrival because its context was nil or done makes no attempt
// and returns the context's error, not a rejection: nothing is recorded. Nor is a call
// through a disabled retry, nor one through an instance without a recorder.
func TestOB1_RetryRecordsNothingForArrivalRefusalsDisabledOrWithoutRecorder(t *testing.T) {
	clk := clock.NewManual()
	r, rec := observedRetry(t, clk)
	done, cancel := context.WithCancel(contracttest.Marked("done"))
	cancel()
	fn := &recorder{clk: clk, errs: []error{nil}}
	_, err := retry.DecorateFunc(r, fn.call)(done, struct{}{})
	require.ErrorIs(t, err, context.Canceled)
	afn := &asyncFn{clk: clk}
	_, err = settled(t, retry.DecorateAsyncFunc(r, afn.call)(done, struct{}{}))
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, rec.Outcomes())

	require.NoError(t, r.Reconfigure(retry.Config{MaxAttempts: 3, Multiplier: 1, Disabled: true}))
	failing := &recorder{clk: clk, errs: []error{errBoom}}
	_, err = retry.DecorateFunc(r, failing.call)(contracttest.Marked("disabled"), struct{}{})
	require.ErrorIs(t, err, errBoom)
	_, err = settled(t, retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] {
		return async.Failed[int](errBoom)
	})(contracttest.Marked("disabled"), struct{}{}))
	require.ErrorIs(t, err, errBoom)
	assert.Empty(t, rec.Outcomes())
	for _, ctx := range rec.EventContexts() {
		assert.Nil(t, contracttest.MarkOf(ctx), "only the ConfigChanged event, with no call's context")
	}

	ev := &events{}
	bare := newRetry(t, retry.WithClock(clk), retry.Observe(&contracttest.NilObserver{}), retry.OnEvent(ev.listen), retry.MaxAttempts(2))
	_, err = retry.DecorateFunc(bare, (&recorder{clk: clk, errs: []error{errBoom}}).call)(contracttest.Marked("bare"), struct{}{})
	require.ErrorIs(t, err, errBoom)
	assert.Len(t, ev.get(), 2, "the listener still gets RetryAttempt and RetryExhausted")
}

// OB-1: with a recorder attached, a call that succeeds the first time, and one that fails
// at once with an error that is not retried, still allocate nothing, sync and async.
func TestOB1_RetryRecorderAllocatesNothing(t *testing.T) {
	r := newRetry(t, retry.WithClock(clock.NewManual()), retry.AbortOn(errOther), retry.Observe(contracttest.NopObserver{}))
	ctx := context.Background()
	ok := retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) { return 1, nil })
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = ok(ctx, struct{}{}) }), "first-attempt success")
	aborted := retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) { return 0, errOther })
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = aborted(ctx, struct{}{}) }), "an error not retried")
	retried := retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) { return 0, errBoom })
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = retried(ctx, struct{}{}) }), "retried, on a manual clock")

	done, failed := async.Completed(1), async.Failed[int](errOther)
	aok := retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] { return done })
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = aok(ctx, struct{}{}) }), "async: completed success")
	aaborted := retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] { return failed })
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = aaborted(ctx, struct{}{}) }), "async: failed, not retried")
}

// BenchmarkSuccessObserved: the first attempt succeeds, with a recorder that does nothing.
func BenchmarkSuccessObserved(b *testing.B) {
	r, err := retry.New(retry.Observe(contracttest.NopObserver{}))
	require.NoError(b, err)
	call := retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) { return 1, nil })
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = call(ctx, struct{}{})
	}
}
