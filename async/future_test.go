package async_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/futuretest"
)

var errBoom = errors.New("boom")

func bg() context.Context { return context.Background() }

func TestNewPromise_CompletesOnce(t *testing.T) {
	f, complete := async.NewPromise[int]()
	futuretest.RequirePending(t, f)

	complete(1, nil)
	complete(2, nil)
	complete(0, errBoom)

	v, ok, err := f.Result()
	assert.True(t, ok)
	assert.Equal(t, 1, v)
	assert.NoError(t, err)
	v, err = futuretest.Done(t, f)
	assert.Equal(t, 1, v)
	assert.NoError(t, err)
	assert.False(t, f.Cancel(), "Cancel after completion")
	v, err = futuretest.Done(t, f)
	assert.Equal(t, 1, v)
	assert.NoError(t, err)
}

func TestNewPromise_FailsOnce(t *testing.T) {
	f, complete := async.NewPromise[string]()
	complete("", errBoom)
	complete("late", nil)
	v, err := futuretest.Done(t, f)
	assert.ErrorIs(t, err, errBoom)
	assert.Equal(t, "", v)
}

func TestNewPromise_CompleteAfterCancelIsIgnored(t *testing.T) {
	f, complete := async.NewPromise[int]()
	assert.True(t, f.Cancel(), "a plain promise has no work that started")
	complete(7, nil)
	v, err := futuretest.Done(t, f)
	assert.ErrorIs(t, err, async.ErrCanceled)
	assert.Equal(t, 0, v)
}

// SPEC AS-4: Await with a context that ends first returns ctx.Err() and leaves the future
// pending (it is not canceled).
func TestAwait_AS4_ContextEndsFirst(t *testing.T) {
	f, complete := async.NewPromise[int]()

	ctx, cancel := context.WithCancel(bg())
	cancel()
	v, err := f.Await(ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 0, v)
	futuretest.RequirePending(t, f)

	dctx, dcancel := context.WithTimeout(bg(), time.Millisecond)
	defer dcancel()
	_, err = f.Await(dctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	futuretest.RequirePending(t, f)

	complete(5, nil)
	v, err = futuretest.Done(t, f)
	require.NoError(t, err)
	assert.Equal(t, 5, v)
}

// SPEC AS-4: a completed future's result wins over a done context.
func TestAwait_AS4_CompletedFutureIgnoresDoneContext(t *testing.T) {
	ctx, cancel := context.WithCancel(bg())
	cancel()
	for range 100 {
		v, err := async.Completed(3).Await(ctx)
		require.NoError(t, err)
		require.Equal(t, 3, v)
	}
}

func TestAwait_BlocksUntilCompleted(t *testing.T) {
	f, complete := async.NewPromise[int]()
	got := make(chan int, 1)
	go func() {
		v, _ := f.Await(bg())
		got <- v
	}()
	select {
	case <-got:
		t.Fatal("Await returned before completion")
	default:
	}
	complete(9, nil)
	select {
	case v := <-got:
		assert.Equal(t, 9, v)
	case <-time.After(futuretest.Generous):
		t.Fatal("Await did not return")
	}
}

func TestResult_NonBlocking(t *testing.T) {
	f, complete := async.NewPromise[int]()
	v, ok, err := f.Result()
	assert.False(t, ok)
	assert.Equal(t, 0, v)
	assert.NoError(t, err)

	complete(0, errBoom)
	v, ok, err = f.Result()
	assert.True(t, ok)
	assert.Equal(t, 0, v)
	assert.ErrorIs(t, err, errBoom)
}

func TestDone_ClosedOnCompletion(t *testing.T) {
	f, complete := async.NewPromise[int]()
	select {
	case <-f.Done():
		t.Fatal("Done closed early")
	default:
	}
	complete(1, nil)
	select {
	case <-f.Done():
	default:
		t.Fatal("Done not closed after completion")
	}
	assert.Equal(t, f.Done(), f.Done(), "the same channel every time")
}

func TestDone_ClosedOnCancel(t *testing.T) {
	f, _ := async.NewPromise[int]()
	f.Cancel()
	select {
	case <-f.Done():
	default:
		t.Fatal("Done not closed after Cancel")
	}
}

func TestCompleted(t *testing.T) {
	f := async.Completed("x")
	v, ok, err := f.Result()
	assert.True(t, ok)
	assert.Equal(t, "x", v)
	assert.NoError(t, err)
	select {
	case <-f.Done():
	default:
		t.Fatal("Done of Completed not closed")
	}
	assert.False(t, f.Cancel(), "Cancel of a completed future")
	v, err = futuretest.Done(t, f)
	assert.NoError(t, err)
	assert.Equal(t, "x", v)
}

func TestFailed(t *testing.T) {
	f := async.Failed[int](errBoom)
	v, ok, err := f.Result()
	assert.True(t, ok)
	assert.Equal(t, 0, v)
	assert.ErrorIs(t, err, errBoom)
	select {
	case <-f.Done():
	default:
		t.Fatal("Done of Failed not closed")
	}
	assert.False(t, f.Cancel())
	_, err = futuretest.Done(t, f)
	assert.ErrorIs(t, err, errBoom)
}

func TestGo_RunsOnAnotherGoroutine(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	started := make(chan struct{})
	returned := make(chan *async.Future[int], 1)
	go func() {
		returned <- async.Go(bg(), func(context.Context) (int, error) {
			close(started)
			<-release // blocks: Go must return before fn does
			return 42, nil
		})
	}()
	var f *async.Future[int]
	select {
	case f = <-returned:
	case <-time.After(futuretest.Generous):
		t.Fatal("Go ran fn on the caller's goroutine")
	}
	<-started
	futuretest.RequirePending(t, f)
	release <- struct{}{}
	v, err := futuretest.Await(t, f)
	require.NoError(t, err)
	assert.Equal(t, 42, v)
}

func TestGo_Error(t *testing.T) {
	f := async.Go(bg(), func(context.Context) (int, error) { return 0, errBoom })
	_, err := futuretest.Await(t, f)
	assert.ErrorIs(t, err, errBoom)
}

// SPEC AS-3, AS-4: Cancel of a started Go future cancels its context, returns false (the
// work had started) and completes the future with ErrCanceled; fn's result is discarded.
func TestGo_AS3_CancelCancelsContext(t *testing.T) {
	started := make(chan struct{})
	finished := make(chan error, 1)
	f := async.Go(bg(), func(ctx context.Context) (int, error) {
		close(started)
		<-ctx.Done()
		finished <- ctx.Err()
		return 99, nil // discarded
	})
	<-started
	assert.False(t, f.Cancel(), "the work had started")
	v, err := futuretest.Await(t, f)
	assert.ErrorIs(t, err, async.ErrCanceled)
	assert.Equal(t, 0, v)
	select {
	case err := <-finished:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(futuretest.Generous):
		t.Fatal("fn's context was not canceled")
	}
	assert.False(t, f.Cancel(), "second Cancel")
}

// SPEC AS-4: the context given to fn derives from the caller's.
func TestGo_AS4_ParentContextCancels(t *testing.T) {
	ctx, cancel := context.WithCancel(bg())
	f := async.Go(ctx, func(ctx context.Context) (int, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	})
	cancel()
	_, err := futuretest.Await(t, f)
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, async.ErrCanceled)
}

// SPEC AS-3: Cancel runs the hook once and returns its result; later Cancels return false.
func TestNewCancelablePromise_AS3_CancelRunsHookOnce(t *testing.T) {
	for _, notStarted := range []bool{true, false} {
		var calls atomic.Int32
		var hookSaw error
		var f *async.Future[int]
		f, _ = async.NewCancelablePromise[int](func() bool {
			calls.Add(1)
			_, _, hookSaw = f.Result() // the future is already canceled when the hook runs
			return notStarted
		})
		assert.Equal(t, notStarted, f.Cancel(), "Cancel returns the hook's result")
		assert.False(t, f.Cancel(), "second Cancel")
		assert.Equal(t, int32(1), calls.Load(), "hook runs once")
		assert.ErrorIs(t, hookSaw, async.ErrCanceled)
		_, err := futuretest.Done(t, f)
		assert.ErrorIs(t, err, async.ErrCanceled)
	}
}

func TestNewCancelablePromise_CancelAfterCompletionSkipsHook(t *testing.T) {
	var calls atomic.Int32
	f, complete := async.NewCancelablePromise[int](func() bool { calls.Add(1); return true })
	complete(4, nil)
	assert.False(t, f.Cancel())
	assert.Equal(t, int32(0), calls.Load(), "hook not run after completion")
	v, err := futuretest.Done(t, f)
	assert.NoError(t, err)
	assert.Equal(t, 4, v)
}

func TestNewCancelablePromise_ConcurrentCancelRunsHookOnce(t *testing.T) {
	var calls atomic.Int32
	f, _ := async.NewCancelablePromise[int](func() bool { calls.Add(1); return true })
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			if f.Cancel() {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int32(1), calls.Load())
	assert.Equal(t, int32(1), wins.Load())
}

func TestOnComplete_BeforeAndAfterCompletion(t *testing.T) {
	f, complete := async.NewPromise[int]()
	var order []string
	f.OnComplete(func(v int, err error) {
		assert.Equal(t, 8, v)
		assert.NoError(t, err)
		order = append(order, "first")
	})
	f.OnComplete(func(int, error) { order = append(order, "second") })
	f.OnComplete(func(int, error) { order = append(order, "third") })
	assert.Empty(t, order, "no callback before completion")

	complete(8, nil)
	assert.Equal(t, []string{"first", "second", "third"}, order, "run once each, in registration order")

	f.OnComplete(func(v int, err error) {
		assert.Equal(t, 8, v)
		order = append(order, "after")
	})
	assert.Equal(t, []string{"first", "second", "third", "after"}, order, "runs at once when already complete")

	complete(9, nil)
	f.Cancel()
	assert.Len(t, order, 4, "callbacks never run twice")
}

func TestOnComplete_SeesCancellation(t *testing.T) {
	f, _ := async.NewPromise[int]()
	var got error
	f.OnComplete(func(_ int, err error) { got = err })
	f.Cancel()
	assert.ErrorIs(t, got, async.ErrCanceled)
}

// Callbacks run without the future's lock: they may use the future.
func TestOnComplete_CallbackMayUseFuture(t *testing.T) {
	f, complete := async.NewPromise[int]()
	var inner bool
	f.OnComplete(func(int, error) {
		_, ok, _ := f.Result()
		assert.True(t, ok)
		f.Cancel()
		f.OnComplete(func(int, error) { inner = true })
	})
	done := make(chan struct{})
	go func() { defer close(done); complete(1, nil) }()
	select {
	case <-done:
	case <-time.After(futuretest.Generous):
		t.Fatal("deadlock: a callback used its future")
	}
	assert.True(t, inner)
}

// Many goroutines complete, cancel and await the same future at once (run with -race):
// exactly one completion wins, and everyone sees its outcome.
func TestFuture_ConcurrentCompleteCancelAwait(t *testing.T) {
	for range 50 {
		var hook atomic.Int32
		f, complete := async.NewCancelablePromise[int](func() bool { hook.Add(1); return true })
		var callbacks atomic.Int32
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			results []error
			values  []int
		)
		start := make(chan struct{})
		for i := range 40 {
			switch i % 4 {
			case 0:
				wg.Go(func() { <-start; complete(i, nil) })
			case 1:
				wg.Go(func() { <-start; f.Cancel() })
			case 2:
				wg.Go(func() {
					<-start
					v, err := f.Await(bg())
					mu.Lock()
					results, values = append(results, err), append(values, v)
					mu.Unlock()
				})
			case 3:
				wg.Go(func() {
					<-start
					f.OnComplete(func(int, error) { callbacks.Add(1) })
					f.Result()
					<-f.Done()
				})
			}
		}
		close(start)
		wg.Wait()

		v, ok, err := f.Result()
		require.True(t, ok)
		for i := range results {
			require.Equal(t, err, results[i], "every awaiter sees the same outcome")
			require.Equal(t, v, values[i])
		}
		require.Equal(t, int32(10), callbacks.Load(), "each callback ran once")
		if errors.Is(err, async.ErrCanceled) {
			require.Equal(t, int32(1), hook.Load())
		} else {
			require.NoError(t, err)
			require.Equal(t, int32(0), hook.Load(), "no hook after completion")
		}
	}
}

// A promise costs no goroutine.
func TestPromise_CreatesNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	futures := make([]*async.Future[int], 0, 1000)
	for i := range 1000 {
		var f *async.Future[int]
		switch i % 3 {
		case 0:
			f, _ = async.NewPromise[int]()
		case 1:
			f, _ = async.NewCancelablePromise[int](func() bool { return true })
		case 2:
			p, _ := async.NewPromise[int]()
			f = async.Map(p, func(v int) (int, error) { return v, nil })
		}
		f.OnComplete(func(int, error) {})
		futures = append(futures, f)
	}
	after := runtime.NumGoroutine()
	assert.LessOrEqual(t, after, before, "pending promises started goroutines")
	for _, f := range futures {
		futuretest.RequirePending(t, f)
	}
}

// A nil future acts as one failed with ErrNilFuture: no method panics.
func TestFuture_NilActsAsFailed(t *testing.T) {
	var f *async.Future[int]
	select {
	case <-f.Done():
	default:
		t.Fatal("Done of a nil future is not closed")
	}
	v, err := f.Await(context.Background())
	require.ErrorIs(t, err, async.ErrNilFuture)
	require.Zero(t, v)
	_, ok, err := f.Result()
	require.True(t, ok)
	require.ErrorIs(t, err, async.ErrNilFuture)
	require.False(t, f.Cancel())
	var got error
	f.OnComplete(func(_ int, err error) { got = err })
	require.ErrorIs(t, got, async.ErrNilFuture)
	_, err = async.Map(f, func(v int) (int, error) { return v, nil }).Await(context.Background())
	require.ErrorIs(t, err, async.ErrNilFuture)
}
