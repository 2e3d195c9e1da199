package async_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/futuretest"
)

func answer(context.Context) (int, error) { return 42, nil }

// pair is what the goroutine of the plain Go equivalent of Go sends on its channel.
type pair struct {
	v   int
	err error
}

// goChan is the plain Go equivalent of Go followed by Await: a goroutine, a buffered
// channel carrying (T, error), and a select on it and on ctx.
func goChan(ctx context.Context, fn func(context.Context) (int, error)) (int, error) {
	ch := make(chan pair, 1)
	go func() {
		v, err := fn(ctx)
		ch <- pair{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// SPEC AS-5: Go followed by Await, with a context that never ends, costs two allocations
// (the future with its goroutine's state, and the goroutine's start), no more than a
// goroutine and a buffered channel awaited with a select, measured here on the spot.
func TestGo_AS5_AllocsNoMoreThanGoroutineAndChannel(t *testing.T) {
	ctx := bg()
	peer := testing.AllocsPerRun(1000, func() {
		if _, err := goChan(ctx, answer); err != nil {
			t.Fatal(err)
		}
	})
	ours := testing.AllocsPerRun(1000, func() {
		if _, err := async.Go(ctx, answer).Await(ctx); err != nil {
			t.Fatal(err)
		}
	})
	assert.Equal(t, 2.0, ours)
	assert.LessOrEqual(t, ours, peer, "a goroutine and a channel cost %v", peer)
}

// SPEC AS-5: a promise completed and awaited, with a callback registered on it, costs the
// future and its completion function; a completed future costs nothing to await.
func TestPromise_AS5_Allocs(t *testing.T) {
	ctx := bg()
	cb := func(int, error) {}
	assert.Equal(t, 2.0, testing.AllocsPerRun(1000, func() {
		f, complete := async.NewPromise[int]()
		f.OnComplete(cb)
		complete(1, nil)
		if _, err := f.Await(ctx); err != nil {
			t.Fatal(err)
		}
	}))
	f := async.Completed(1)
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		if _, err := f.Await(ctx); err != nil {
			t.Fatal(err)
		}
		<-f.Done()
	}))
}

// SPEC AS-4: the context Go gives fn, for a parent that never ends, carries the parent's
// values and no deadline, is not done while fn runs, and is canceled once fn returns, as
// one made by context.WithCancel whose cancel function fn's caller defers.
func TestGo_AS4_ContextOfAParentThatNeverEnds(t *testing.T) {
	type key struct{}
	parent := context.WithValue(bg(), key{}, "v")
	got := make(chan context.Context, 1)
	f := async.Go(parent, func(ctx context.Context) (int, error) {
		assert.Equal(t, "v", ctx.Value(key{}))
		_, ok := ctx.Deadline()
		assert.False(t, ok)
		assert.NoError(t, ctx.Err())
		assert.NoError(t, context.Cause(ctx))
		select {
		case <-ctx.Done():
			t.Error("done while fn runs")
		default:
		}
		got <- ctx
		return 1, nil
	})
	v, err := f.Await(bg())
	require.NoError(t, err)
	assert.Equal(t, 1, v)
	ctx := <-got
	<-ctx.Done()
	assert.ErrorIs(t, ctx.Err(), context.Canceled)
	assert.ErrorIs(t, context.Cause(ctx), context.Canceled)
	assert.Equal(t, ctx.Done(), ctx.Done(), "Done returns the same channel every time")
}

// SPEC AS-3, AS-4: contexts that fn derives from its context end when the future is
// canceled, and following it costs no goroutine each.
func TestGo_AS3_CancelEndsContextsDerivedInside(t *testing.T) {
	const n = 50
	derived := make(chan []context.Context, 1)
	counted := make(chan int, 1)
	proceed := make(chan struct{})
	f := async.Go(bg(), func(ctx context.Context) (int, error) {
		before := runtime.NumGoroutine()
		cs := make([]context.Context, 0, 2*n)
		for range n {
			c, cancel := context.WithCancel(ctx)
			t.Cleanup(cancel)
			d, cancelD := context.WithTimeout(ctx, futuretest.Generous)
			t.Cleanup(cancelD)
			cs = append(cs, c, d)
		}
		counted <- runtime.NumGoroutine() - before
		derived <- cs
		<-proceed
		return 0, nil
	})
	assert.Less(t, <-counted, n, "no goroutine per derived context")
	cs := <-derived
	for _, c := range cs {
		require.NoError(t, c.Err())
	}
	assert.False(t, f.Cancel())
	for _, c := range cs {
		select {
		case <-c.Done():
		case <-time.After(futuretest.Generous):
			t.Fatal("a derived context did not end")
		}
		assert.ErrorIs(t, c.Err(), context.Canceled)
	}
	close(proceed)
	_, err := f.Await(bg())
	assert.ErrorIs(t, err, async.ErrCanceled)
}

// A context derived inside fn and canceled before the future completes is let go: the
// future's completion does not run its hook.
func TestGo_DerivedContextCanceledFirst(t *testing.T) {
	var hook sync.WaitGroup
	f := async.Go(bg(), func(ctx context.Context) (int, error) {
		hook.Add(1)
		stop := context.AfterFunc(ctx, func() { t.Error("stopped hook ran"); hook.Done() })
		if !stop() {
			t.Error("stop should report that it stopped the hook")
			return 0, nil
		}
		hook.Done()
		c, cancel := context.WithCancel(ctx)
		cancel()
		assert.ErrorIs(t, c.Err(), context.Canceled)
		return 1, nil
	})
	_, err := f.Await(bg())
	require.NoError(t, err)
	hook.Wait()
}

// A context that can end is followed by fn's context, and Cancel cancels it too.
func TestGo_AS4_ParentThatCanEnd(t *testing.T) {
	parent, cancel := context.WithCancel(bg())
	defer cancel()
	started := make(chan context.Context, 1)
	f := async.Go(parent, func(ctx context.Context) (int, error) {
		started <- ctx
		<-ctx.Done()
		return 0, ctx.Err()
	})
	ctx := <-started
	assert.NoError(t, ctx.Err())
	assert.False(t, f.Cancel())
	<-ctx.Done()
	assert.ErrorIs(t, ctx.Err(), context.Canceled)
	assert.NoError(t, parent.Err(), "the parent is not canceled")
}

// Done's channel is made on demand: the same channel every time while pending, closed on
// completion; a future already complete has its Done closed.
func TestDone_MadeOnDemand(t *testing.T) {
	f, complete := async.NewPromise[int]()
	ch := f.Done()
	assert.Equal(t, ch, f.Done(), "same channel")
	futuretest.RequirePending(t, f)
	complete(1, nil)
	<-ch
	<-f.Done()
	<-async.Completed(1).Done()
	<-async.Failed[int](errBoom).Done()

	g, completeG := async.NewPromise[int]()
	completeG(2, nil) // completed before anyone asked for Done
	<-g.Done()
}

// Await with a context that never ends, or a nil one, waits for the future without a
// channel; one completion from another goroutine wakes every awaiter.
func TestAwait_ContextThatNeverEnds(t *testing.T) {
	for _, ctx := range []context.Context{bg(), nil} {
		f, complete := async.NewPromise[int]()
		var wg sync.WaitGroup
		results := make(chan int, 10)
		for range 10 {
			wg.Go(func() {
				v, err := f.Await(ctx)
				assert.NoError(t, err)
				results <- v
			})
		}
		time.AfterFunc(time.Millisecond, func() { complete(7, nil) }) // after some awaiters wait
		wg.Wait()
		close(results)
		for v := range results {
			assert.Equal(t, 7, v)
		}
	}
}

// A completion that races with Await on a context that has ended gives one of the two
// outcomes, never a half-completed one (run with -race).
func TestAwait_ContextEndsAsTheFutureCompletes(t *testing.T) {
	for range 200 {
		f, complete := async.NewPromise[int]()
		ctx, cancel := context.WithCancel(bg())
		go cancel()
		go complete(5, nil)
		v, err := f.Await(ctx)
		if err != nil {
			assert.ErrorIs(t, err, context.Canceled)
			assert.Zero(t, v)
		} else {
			assert.Equal(t, 5, v)
		}
		_, _ = futuretest.Await(t, f)
	}
}

// Many goroutines complete, cancel, await (with a context that never ends), register
// callbacks and ask for Done on futures from Go at once (run with -race): one completion
// wins, every callback runs once, and no goroutine is left behind. A callback runs on the
// completing goroutine after the future is done, which may be fn's goroutine: the test
// waits for the callbacks themselves, not only for the goroutines that registered them.
func TestGo_ConcurrentCancelAwait(t *testing.T) {
	for range 50 {
		release := make(chan struct{})
		f := async.Go(bg(), func(ctx context.Context) (int, error) {
			select {
			case <-release:
				return 3, nil
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		})
		var (
			wg        sync.WaitGroup
			mu        sync.Mutex
			callbacks int
			errs      []error
		)
		ran := make(chan struct{}, 20)
		start := make(chan struct{})
		for i := range 20 {
			wg.Go(func() {
				<-start
				switch i % 4 {
				case 0:
					f.Cancel()
				case 1:
					_, err := f.Await(bg())
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				case 2:
					f.OnComplete(func(int, error) { mu.Lock(); callbacks++; mu.Unlock(); ran <- struct{}{} })
				case 3:
					<-f.Done()
				}
			})
		}
		close(start)
		close(release)
		wg.Wait()
		_, ok, err := f.Result()
		require.True(t, ok)
		for _, e := range errs {
			require.Equal(t, err, e)
		}
		for range 5 {
			<-ran
		}
		mu.Lock()
		require.Equal(t, 5, callbacks)
		mu.Unlock()
	}
}

// SPEC AS-5: fn's context, derived from a context that can end, is canceled when fn exits
// without returning (runtime.Goexit), as one whose cancel function is deferred.
func TestGo_AS5_GoexitCancelsTheContext(t *testing.T) {
	parent, cancel := context.WithCancel(bg())
	defer cancel()
	got := make(chan context.Context, 1)
	async.Go(parent, func(ctx context.Context) (int, error) {
		got <- ctx
		runtime.Goexit()
		return 0, nil
	})
	ctx := <-got
	select {
	case <-ctx.Done():
	case <-time.After(futuretest.Generous):
		t.Fatal("fn's context was not canceled after Goexit")
	}
}

// SPEC AS-5: the cause of fn's context is its own cancellation, whatever the parent hides
// behind its Value.
func TestGo_AS5_CauseIsTheFuturesOwn(t *testing.T) {
	req, cancelReq := context.WithCancelCause(bg())
	cancelReq(errors.New("request finished"))
	got := make(chan error, 1)
	started, release := make(chan struct{}), make(chan struct{})
	f := async.Go[int](detachedCtx{req}, func(ctx context.Context) (int, error) {
		close(started)
		<-release
		<-ctx.Done()
		got <- context.Cause(ctx)
		return 0, nil
	})
	<-started
	f.Cancel()
	close(release)
	assert.ErrorIs(t, <-got, context.Canceled)
}

// detachedCtx passes values through and never ends, as "detach" wrappers do.
type detachedCtx struct{ parent context.Context }

func (detachedCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (detachedCtx) Done() <-chan struct{}       { return nil }
func (detachedCtx) Err() error                  { return nil }
func (d detachedCtx) Value(k any) any           { return d.parent.Value(k) }
