package bulkhead_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
)

// SPEC AS-2, AS-3: whichever way a queued call's wait ends (a slot, Cancel, MaxWait, its
// context ending), nothing stays registered on its context.
func TestAS3_AsyncContextHookRemovedOnEveryOutcome(t *testing.T) {
	clk := clock.NewManual()
	b, err := bulkhead.New(bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Second), bulkhead.WithClock(clk))
	require.NoError(t, err)
	c := contracttest.NewCalls()
	call := bulkhead.DecorateAsyncFunc(b, c.Next)
	shared := ctxtest.NewOwnDone()
	defer shared.Cancel()
	before := runtime.NumGoroutine()

	holder := call(shared, 0)
	granted := call(shared, 1)
	canceled := call(shared, 2)
	ended := ctxtest.NewOwnDone()
	endedCall := call(ended, 3)
	assert.True(t, canceled.Cancel())
	ended.Cancel()
	_, err = endedCall.Await(context.Background())
	require.ErrorIs(t, err, bulkhead.ErrFull)
	require.ErrorIs(t, err, context.Canceled)

	c.Finish(0) // the slot goes to call 1
	_, err = holder.Await(context.Background())
	require.NoError(t, err)
	expired := call(shared, 4)
	clk.Advance(time.Second)
	_, err = result(t, expired)
	require.ErrorIs(t, err, bulkhead.ErrFull)
	c.Finish(1)
	_, err = granted.Await(context.Background())
	require.NoError(t, err)

	assert.Equal(t, []int{0, 1}, c.Started())
	assert.LessOrEqual(t, ctxtest.SettleGoroutines(before), before, "no hook left on the context")
	assert.Zero(t, clk.PendingTasks())
}

// SPEC AS-2: a MaxWait timer that fires as it is armed, before the hook on the context
// could be registered, leaves no hook behind.
func TestAS2_AsyncContextHookRemovedWhenTimerFiresAtOnce(t *testing.T) {
	b, err := bulkhead.New(bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Hour),
		bulkhead.WithClock(ctxtest.EagerClock{Manual: clock.NewManual()}))
	require.NoError(t, err)
	c := contracttest.NewCalls()
	call := bulkhead.DecorateAsyncFunc(b, c.Next)
	ctx := ctxtest.NewOwnDone()
	defer ctx.Cancel()
	before := runtime.NumGoroutine()

	holder := call(ctx, 0)
	_, err = call(ctx, 1).Await(context.Background())
	require.ErrorIs(t, err, bulkhead.ErrFull, "its MaxWait passed at once")
	c.Finish(0)
	_, err = holder.Await(context.Background())
	require.NoError(t, err)
	assert.LessOrEqual(t, ctxtest.SettleGoroutines(before), before, "no hook left on the context")
}

// SPEC AS-2, AS-3: on the system clock, calls that race for two slots (some granted a
// slot, some expiring at MaxWait, sync and async) leave nothing registered on the
// long-lived context they share.
func TestAS2_AsyncContextHookRemovedSystemClock(t *testing.T) {
	b, err := bulkhead.New(bulkhead.MaxConcurrent(2), bulkhead.MaxWait(50*time.Microsecond))
	require.NoError(t, err)
	var pending sync.WaitGroup
	asyncCall := bulkhead.DecorateAsyncFunc(b, func(_ context.Context, i int) *async.Future[int] {
		if i%2 == 0 {
			return async.Completed(i)
		}
		f, complete := async.NewPromise[int]()
		pending.Add(1)
		time.AfterFunc(20*time.Microsecond, func() { complete(i, nil); pending.Done() })
		return f
	})
	syncCall := bulkhead.DecorateFunc(b, func(_ context.Context, i int) (int, error) { return i, nil })
	ctx := ctxtest.NewOwnDone()
	defer ctx.Cancel()
	before := runtime.NumGoroutine()

	var waited, expired atomic.Int64
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				if g == 0 && i%10 == 0 {
					_, _ = syncCall(ctx, i)
					continue
				}
				f := asyncCall(ctx, i)
				if _, done, _ := f.Result(); !done {
					waited.Add(1)
				}
				if _, err := f.Await(context.Background()); err != nil {
					assert.ErrorIs(t, err, bulkhead.ErrFull)
					expired.Add(1)
				}
			}
		})
	}
	wg.Wait()
	pending.Wait()
	t.Logf("%d calls waited, %d expired", waited.Load(), expired.Load())
	assert.LessOrEqual(t, ctxtest.SettleGoroutines(before), before, "no hook left on the context")
}

// A call queued for a slot (MaxConcurrent 1, MaxWait 1h, manual clock), then granted it.
func BenchmarkAsyncQueued(b *testing.B) { benchAsyncQueued(b, context.Background(), false) }

// The same with a context that can end: each wait registers a hook on it.
func BenchmarkAsyncQueuedCancelableContext(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	benchAsyncQueued(b, ctx, false)
}

// A queued call canceled before it gets a slot.
func BenchmarkAsyncQueuedCanceled(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	benchAsyncQueued(b, ctx, true)
}

func benchAsyncQueued(b *testing.B, ctx context.Context, cancel bool) {
	bh, err := bulkhead.New(bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Hour), bulkhead.WithClock(clock.NewManual()))
	require.NoError(b, err)
	var complete func(int, error) // completes the call in the slot
	started := 0
	call := bulkhead.DecorateAsyncFunc(bh, func(context.Context, int) *async.Future[int] {
		f, c := async.NewPromise[int]()
		complete = c
		started++
		return f
	})
	call(ctx, 0)
	b.ReportAllocs()
	for b.Loop() {
		f := call(ctx, 0)
		if cancel {
			if !f.Cancel() {
				b.Fatal("the call did not wait")
			}
			continue
		}
		n := started
		complete(1, nil) // the slot goes to f, whose call starts
		if started != n+1 || !pending(f) {
			b.Fatal("the call did not start")
		}
	}
}
