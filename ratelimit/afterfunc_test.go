package ratelimit_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// ownDoneCtx is a long-lived context whose Done channel is not the standard library's:
// context.AfterFunc then watches it with one goroutine per registration, so that a
// registration left behind shows up in runtime.NumGoroutine.
type ownDoneCtx struct {
	context.Context
	done chan struct{}
	once sync.Once
}

func newOwnDoneCtx() *ownDoneCtx {
	return &ownDoneCtx{Context: context.Background(), done: make(chan struct{})}
}

func (c *ownDoneCtx) Done() <-chan struct{} { return c.done }

func (c *ownDoneCtx) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}

func (c *ownDoneCtx) cancel() { c.once.Do(func() { close(c.done) }) }

// settleGoroutines polls until at most want goroutines run, or 5s pass, and returns the
// last count.
func settleGoroutines(want int) int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(time.Millisecond)
	}
}

// SPEC AS-2, AS-3: a waiting call's hook on its context is removed whichever way the wait
// ends, also when the permit's timer fires before the hook is registered. Calls 2µs apart
// on the system clock make that race frequent; nothing may remain registered on the
// long-lived context once every future is complete.
func TestAS2_ContextHookRemovedWhenTimerFiresFirst(t *testing.T) {
	l, err := ratelimit.New(ratelimit.Permits(1), ratelimit.Period(2*time.Microsecond), ratelimit.MaxWait(time.Second))
	require.NoError(t, err)
	call := ratelimit.DecorateAsyncFunc(l, func(context.Context, int) *async.Future[int] { return async.Completed(1) })
	ctx := newOwnDoneCtx()
	defer ctx.cancel()
	before := runtime.NumGoroutine()

	const calls = 50_000
	futures := make([]*async.Future[int], 0, 1000)
	waited := 0
	for i := range calls {
		f := call(ctx, i)
		if _, done, _ := f.Result(); !done {
			waited++
		}
		futures = append(futures, f)
		if len(futures) == cap(futures) {
			awaitAll(t, futures)
			futures = futures[:0]
		}
	}
	awaitAll(t, futures)
	require.Positive(t, waited, "some calls waited for their permit")
	assert.LessOrEqual(t, settleGoroutines(before), before, "no hook left on the context")
}

func awaitAll(t *testing.T, fs []*async.Future[int]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, f := range fs {
		_, err := f.Await(ctx)
		require.NoError(t, err)
	}
}

// eagerClock's timers fire at once, on their own goroutine, and AfterFunc waits up to
// 50ms for the function to return before it returns itself: a timer that fires before
// the code that armed it goes on.
type eagerClock struct{ *clock.Manual }

type firedTimer struct{}

func (firedTimer) Stop() bool { return false }

func (eagerClock) AfterFunc(_ time.Duration, f func()) clock.Timer {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(50 * time.Millisecond):
	}
	return firedTimer{}
}

// SPEC AS-2: a permit's timer that fires before the call has registered its hook on the
// context does not leave the hook registered (deterministic: the timer fires inside
// AfterFunc).
func TestAS2_ContextHookRemovedWhenTimerFiresAtOnce(t *testing.T) {
	l := newLimiter(t, eagerClock{clock.NewManual()}, ratelimit.Permits(1), ratelimit.Period(time.Second),
		ratelimit.MaxWait(time.Hour))
	call := ratelimit.DecorateAsyncFunc(l, func(context.Context, int) *async.Future[int] { return async.Completed(1) })
	require.True(t, l.TryAcquire())
	ctx := newOwnDoneCtx()
	defer ctx.cancel()
	before := runtime.NumGoroutine()

	v, err := call(ctx, 0).Await(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, v)
	assert.LessOrEqual(t, settleGoroutines(before), before, "no hook left on the context")
}

// SPEC AS-2, AS-3: on a manual clock, every way a wait ends (its permit, Cancel, its
// context ending) leaves nothing registered on the context.
func TestAS3_ContextHookRemovedOnEveryOutcome(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Millisecond), ratelimit.MaxWait(time.Hour))
	call := ratelimit.DecorateAsyncFunc(l, func(context.Context, int) *async.Future[int] { return async.Completed(1) })
	require.True(t, l.TryAcquire())
	shared := newOwnDoneCtx()
	defer shared.cancel()
	before := runtime.NumGoroutine()

	started := call(shared, 1) // started by its timer
	canceled := call(shared, 2)
	assert.True(t, canceled.Cancel())
	ended := newOwnDoneCtx()
	endedCall := call(ended, 3)
	ended.cancel()
	_, err := endedCall.Await(context.Background())
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	require.ErrorIs(t, err, context.Canceled)
	clk.Advance(time.Hour)
	v, err := started.Await(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, v)

	assert.LessOrEqual(t, settleGoroutines(before), before, "no hook left on the context")
	assert.Zero(t, clk.PendingTasks())
}

// A call that waits 1ms for its permit on a manual clock, then starts.
func BenchmarkAsyncWaiting(b *testing.B) { benchAsyncWaiting(b, context.Background(), false) }

// The same with a context that can end: each wait registers a hook on it.
func BenchmarkAsyncWaitingCancelableContext(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	benchAsyncWaiting(b, ctx, false)
}

// A waiting call canceled before its permit (which comes back, so every call waits).
func BenchmarkAsyncWaitingCanceled(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	benchAsyncWaiting(b, ctx, true)
}

func benchAsyncWaiting(b *testing.B, ctx context.Context, cancel bool) {
	clk := clock.NewManual()
	l, err := ratelimit.New(ratelimit.Permits(1), ratelimit.Period(time.Millisecond),
		ratelimit.MaxWait(time.Hour), ratelimit.WithClock(clk))
	require.NoError(b, err)
	done := async.Completed(1)
	call := ratelimit.DecorateAsyncFunc(l, func(context.Context, int) *async.Future[int] { return done })
	require.True(b, l.TryAcquire())
	b.ReportAllocs()
	for b.Loop() {
		f := call(ctx, 0)
		if cancel {
			if !f.Cancel() {
				b.Fatal("the call did not wait")
			}
			continue
		}
		clk.Advance(time.Millisecond)
		if _, ok, _ := f.Result(); !ok {
			b.Fatal("the call did not start")
		}
	}
}
