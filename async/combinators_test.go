package async_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/futuretest"
)

func TestMap_Value(t *testing.T) {
	f, complete := async.NewPromise[int]()
	m := async.Map(f, func(v int) (string, error) { return strconv.Itoa(v * 2), nil })
	futuretest.RequirePending(t, m)
	complete(21, nil)
	v, err := futuretest.Done(t, m)
	require.NoError(t, err)
	assert.Equal(t, "42", v)
}

func TestMap_OfCompleted(t *testing.T) {
	m := async.Map(async.Completed(2), func(v int) (int, error) { return v + 1, nil })
	v, ok, err := m.Result()
	require.True(t, ok, "mapping a completed future completes at once")
	require.NoError(t, err)
	assert.Equal(t, 3, v)
}

func TestMap_ErrorSkipsFn(t *testing.T) {
	var called atomic.Bool
	m := async.Map(async.Failed[int](errBoom), func(v int) (int, error) {
		called.Store(true)
		return v, nil
	})
	_, err := futuretest.Done(t, m)
	assert.ErrorIs(t, err, errBoom)
	assert.False(t, called.Load(), "fn must not run on an error")
}

func TestMap_FnError(t *testing.T) {
	m := async.Map(async.Completed(1), func(int) (int, error) { return 0, errBoom })
	_, err := futuretest.Done(t, m)
	assert.ErrorIs(t, err, errBoom)
}

// SPEC AS-4: cancelling the mapped future cancels the source.
func TestMap_AS4_CancelPropagates(t *testing.T) {
	var hook atomic.Int32
	f, complete := async.NewCancelablePromise[int](func() bool { hook.Add(1); return true })
	var called atomic.Bool
	m := async.Map(f, func(v int) (int, error) { called.Store(true); return v, nil })

	assert.True(t, m.Cancel(), "the source's work had not started")
	_, err := futuretest.Done(t, m)
	assert.ErrorIs(t, err, async.ErrCanceled)
	_, err = futuretest.Done(t, f)
	assert.ErrorIs(t, err, async.ErrCanceled, "the source is canceled")
	assert.Equal(t, int32(1), hook.Load())
	complete(1, nil)
	assert.False(t, called.Load(), "fn never runs after cancellation")
}

func TestMap_SourceCanceledFailsMapped(t *testing.T) {
	f, _ := async.NewPromise[int]()
	m := async.Map(f, func(v int) (int, error) { return v, nil })
	f.Cancel()
	_, err := futuretest.Done(t, m)
	assert.ErrorIs(t, err, async.ErrCanceled)
}

func TestThen_Chain(t *testing.T) {
	f, complete := async.NewPromise[int]()
	var next func(string, error)
	var nextFuture *async.Future[string]
	out := async.Then(f, func(v int) *async.Future[string] {
		nextFuture, next = async.NewPromise[string]()
		assert.Equal(t, 3, v)
		return nextFuture
	})
	futuretest.RequirePending(t, out)
	complete(3, nil)
	futuretest.RequirePending(t, out)
	require.NotNil(t, next, "fn ran once f succeeded")
	next("three", nil)
	v, err := futuretest.Done(t, out)
	require.NoError(t, err)
	assert.Equal(t, "three", v)
}

func TestThen_ChainOfCompleted(t *testing.T) {
	out := async.Then(async.Completed(2), func(v int) *async.Future[int] {
		return async.Then(async.Completed(v*10), func(w int) *async.Future[int] {
			return async.Completed(w + 1)
		})
	})
	v, ok, err := out.Result()
	require.True(t, ok)
	require.NoError(t, err)
	assert.Equal(t, 21, v)
}

func TestThen_ErrorSkipsFn(t *testing.T) {
	var called atomic.Bool
	out := async.Then(async.Failed[int](errBoom), func(int) *async.Future[int] {
		called.Store(true)
		return async.Completed(1)
	})
	_, err := futuretest.Done(t, out)
	assert.ErrorIs(t, err, errBoom)
	assert.False(t, called.Load())
}

func TestThen_NextStepError(t *testing.T) {
	out := async.Then(async.Completed(1), func(int) *async.Future[int] { return async.Failed[int](errBoom) })
	_, err := futuretest.Done(t, out)
	assert.ErrorIs(t, err, errBoom)
}

// SPEC AS-3: cancelling before the next step started cancels f, and fn never runs.
func TestThen_AS3_CancelBeforeNextStarted(t *testing.T) {
	var hook atomic.Int32
	f, complete := async.NewCancelablePromise[int](func() bool { hook.Add(1); return true })
	var called atomic.Bool
	out := async.Then(f, func(int) *async.Future[int] { called.Store(true); return async.Completed(1) })

	assert.True(t, out.Cancel(), "f's work had not started")
	assert.Equal(t, int32(1), hook.Load())
	_, err := futuretest.Done(t, f)
	assert.ErrorIs(t, err, async.ErrCanceled)
	_, err = futuretest.Done(t, out)
	assert.ErrorIs(t, err, async.ErrCanceled)
	complete(1, nil)
	assert.False(t, called.Load())
}

// SPEC AS-3: once the next step started, Cancel cancels it and returns false.
func TestThen_AS3_CancelAfterNextStarted(t *testing.T) {
	f, complete := async.NewPromise[int]()
	var nextHook atomic.Int32
	var next *async.Future[int]
	out := async.Then(f, func(int) *async.Future[int] {
		next, _ = async.NewCancelablePromise[int](func() bool { nextHook.Add(1); return false })
		return next
	})
	complete(1, nil)
	require.NotNil(t, next)

	assert.False(t, out.Cancel(), "the next step had started")
	_, err := futuretest.Done(t, out)
	assert.ErrorIs(t, err, async.ErrCanceled)
	_, err = futuretest.Done(t, next)
	assert.ErrorIs(t, err, async.ErrCanceled, "the next step is canceled")
	assert.Equal(t, int32(1), nextHook.Load())
}

// Cancelling while fn runs: the step fn returns is canceled as soon as it is known.
func TestThen_CancelWhileFnRuns(t *testing.T) {
	f, complete := async.NewPromise[int]()
	var out *async.Future[int]
	var next *async.Future[int]
	var canceled bool
	out = async.Then(f, func(int) *async.Future[int] {
		canceled = out.Cancel()
		next, _ = async.NewPromise[int]()
		return next
	})
	complete(1, nil)
	assert.False(t, canceled, "f had completed")
	_, err := futuretest.Done(t, out)
	assert.ErrorIs(t, err, async.ErrCanceled)
	_, ok, err := next.Result()
	assert.True(t, ok, "the next step is canceled")
	assert.ErrorIs(t, err, async.ErrCanceled)
}

func TestAll_ValuesInOrder(t *testing.T) {
	const n = 5
	fs := make([]*async.Future[int], n)
	completes := make([]func(int, error), n)
	for i := range n {
		fs[i], completes[i] = async.NewPromise[int]()
	}
	all := async.All(fs...)
	for i := n - 1; i >= 0; i-- { // complete in reverse order
		futuretest.RequirePending(t, all)
		completes[i](i*10, nil)
	}
	v, err := futuretest.Done(t, all)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 10, 20, 30, 40}, v)
}

func TestAll_FirstError(t *testing.T) {
	a, completeA := async.NewPromise[int]()
	b, completeB := async.NewPromise[int]()
	c, completeC := async.NewPromise[int]()
	all := async.All(a, b, c)
	errSecond := errors.New("second")
	completeA(1, nil)
	completeC(0, errBoom)
	_, ok, err := all.Result()
	require.True(t, ok, "fails as soon as one fails")
	assert.ErrorIs(t, err, errBoom)
	completeB(0, errSecond)
	v, err := futuretest.Done(t, all)
	assert.ErrorIs(t, err, errBoom, "the first error wins")
	assert.Nil(t, v)
}

func TestAll_Empty(t *testing.T) {
	all := async.All[int]()
	v, ok, err := all.Result()
	require.True(t, ok, "no input: completed at once")
	require.NoError(t, err)
	assert.NotNil(t, v)
	assert.Empty(t, v)
}

func TestAll_AlreadyCompleted(t *testing.T) {
	all := async.All(async.Completed("a"), async.Completed("b"))
	v, ok, err := all.Result()
	require.True(t, ok)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, v)
}

// SPEC AS-4: cancelling All cancels every input.
func TestAll_AS4_CancelCancelsAll(t *testing.T) {
	a, _ := async.NewPromise[int]()
	var hook atomic.Int32
	b, _ := async.NewCancelablePromise[int](func() bool { hook.Add(1); return true })
	started := make(chan struct{})
	c := async.Go(bg(), func(ctx context.Context) (int, error) {
		close(started)
		<-ctx.Done()
		return 0, ctx.Err()
	})
	<-started
	all := async.All(c, a, b) // the started one first: Cancel must still reach the others

	assert.False(t, all.Cancel(), "one input had started")
	for _, f := range []*async.Future[int]{a, b, c} {
		_, err := futuretest.Done(t, f) // Cancel completes each input at once
		assert.ErrorIs(t, err, async.ErrCanceled)
	}
	_, err := futuretest.Done(t, all)
	assert.ErrorIs(t, err, async.ErrCanceled)
	assert.Equal(t, int32(1), hook.Load())
}

func TestAll_CancelNotStarted(t *testing.T) {
	a, _ := async.NewPromise[int]()
	b, _ := async.NewPromise[int]()
	all := async.All(a, b)
	assert.True(t, all.Cancel(), "no input had started")
	_, err := futuretest.Done(t, a)
	assert.ErrorIs(t, err, async.ErrCanceled)
	_, err = futuretest.Done(t, b)
	assert.ErrorIs(t, err, async.ErrCanceled)
}

func TestAll_ConcurrentCompletion(t *testing.T) {
	const n = 100
	fs := make([]*async.Future[int], n)
	completes := make([]func(int, error), n)
	for i := range n {
		fs[i], completes[i] = async.NewPromise[int]()
	}
	all := async.All(fs...)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { completes[i](i, nil) })
	}
	wg.Wait()
	v, err := futuretest.Await(t, all)
	require.NoError(t, err)
	for i := range n {
		assert.Equal(t, i, v[i])
	}
}

func TestAll_NilFutureFails(t *testing.T) {
	f := async.All(async.Completed(1), nil)
	_, ok, err := f.Result()
	require.True(t, ok)
	require.ErrorIs(t, err, async.ErrNilFuture)
}
