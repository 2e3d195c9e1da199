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
	"github.com/resilience4go/resilience4go/policy/bulkhead"
)

func pending[T any](f *async.Future[T]) bool {
	_, ok, _ := f.Result()
	return !ok
}

func result[T any](t *testing.T, f *async.Future[T]) (T, error) {
	t.Helper()
	v, ok, err := f.Result()
	require.True(t, ok, "the future is still pending")
	return v, err
}

// A slot is held from the call until its future completes.
func TestAsyncHoldsSlotUntilComplete(t *testing.T) {
	b, clk, rec := newManual(t, bulkhead.MaxConcurrent(1))
	c := contracttest.NewCalls()
	call := bulkhead.DecorateAsyncFunc(b, c.Next)

	first := call(context.Background(), 1)
	assert.Equal(t, []int{1}, c.Started(), "a free slot starts the call at once")
	assert.Equal(t, 0, b.Snapshot().AvailableSlots)

	second := call(context.Background(), 2)
	_, err := result(t, second)
	requireFull(t, err)
	assert.Equal(t, []int{1}, c.Started(), "a rejected call never starts")

	c.Finish(1)
	got, err := result(t, first)
	require.NoError(t, err)
	assert.Equal(t, "done", got)
	assert.Equal(t, 1, b.Snapshot().AvailableSlots)
	assert.Zero(t, clk.PendingTasks())
	require.Len(t, rec.Events(), 1)
	assert.Equal(t, bulkhead.EventRejected, rec.Events()[0].Kind)
}

// Queued async calls start in FIFO order as slots come back, without a goroutine each.
func TestAsyncQueueFIFO(t *testing.T) {
	b, clk, rec := newManual(t, bulkhead.MaxConcurrent(2), bulkhead.MaxWait(time.Second))
	c := contracttest.NewCalls()
	call := bulkhead.DecorateAsyncFunc(b, c.Next)

	futs := map[int]*async.Future[string]{}
	for i := 1; i <= 5; i++ {
		futs[i] = call(context.Background(), i)
	}
	assert.Equal(t, []int{1, 2}, c.Started())
	assert.Equal(t, bulkhead.Snapshot{Instance: "Svc.Call", AvailableSlots: 0, MaxConcurrent: 2, Waiting: 3}, b.Snapshot())
	assert.Equal(t, 3, clk.PendingTasks(), "one MaxWait timer per waiter")

	clk.Advance(300 * time.Millisecond)
	c.Finish(2)
	assert.Equal(t, []int{1, 2, 3}, c.Started())
	assert.Equal(t, 2, b.Snapshot().Waiting)
	assert.Equal(t, 2, clk.PendingTasks(), "the started call's timer is stopped")
	assert.True(t, pending(futs[3]))

	c.Finish(1)
	c.Finish(3)
	assert.Equal(t, []int{1, 2, 3, 4, 5}, c.Started())
	c.Finish(4)
	c.Finish(5)
	for i := 1; i <= 5; i++ {
		got, err := result(t, futs[i])
		require.NoError(t, err)
		assert.Equal(t, "done", got)
	}
	assert.Equal(t, bulkhead.Snapshot{Instance: "Svc.Call", AvailableSlots: 2, MaxConcurrent: 2}, b.Snapshot())
	assert.Zero(t, clk.PendingTasks())

	events := rec.Events()
	require.Len(t, events, 3)
	for _, e := range events {
		assert.Equal(t, bulkhead.EventWaited, e.Kind)
		assert.Equal(t, 300*time.Millisecond, e.Wait)
	}
}

// After MaxWait (a clock timer) a queued call fails and leaves the queue; it never starts.
func TestAsyncMaxWait(t *testing.T) {
	b, clk, rec := newManual(t, bulkhead.MaxConcurrent(1), bulkhead.MaxWait(100*time.Millisecond))
	c := contracttest.NewCalls()
	call := bulkhead.DecorateAsyncFunc(b, c.Next)
	holder := call(context.Background(), 1)
	waiter := call(context.Background(), 2)
	clk.Advance(50 * time.Millisecond)
	late := call(context.Background(), 3)
	assert.Equal(t, 2, b.Snapshot().Waiting)

	clk.Advance(50 * time.Millisecond)
	_, err := result(t, waiter)
	requireFull(t, err)
	assert.Same(t, b.Rejection(), err)
	assert.Equal(t, 1, b.Snapshot().Waiting)
	assert.True(t, pending(late))

	clk.Advance(50 * time.Millisecond)
	_, err = result(t, late)
	requireFull(t, err)
	assert.Zero(t, b.Snapshot().Waiting)
	assert.Zero(t, clk.PendingTasks())

	c.Finish(1)
	_, err = result(t, holder)
	require.NoError(t, err)
	assert.Equal(t, []int{1}, c.Started(), "timed-out calls never start")
	assert.Equal(t, 1, b.Snapshot().AvailableSlots)

	events := rec.Events()
	require.Len(t, events, 2)
	for _, e := range events {
		assert.Equal(t, bulkhead.EventRejected, e.Kind)
		assert.Equal(t, 100*time.Millisecond, e.Wait)
	}
}

// Cancelling a queued call's future removes it from the queue at once: Cancel returns
// true and the function never runs (SPEC AS-3).
func TestAsyncCancelWhileQueued(t *testing.T) {
	b, clk, rec := newManual(t, bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Second))
	c := contracttest.NewCalls()
	call := bulkhead.DecorateAsyncFunc(b, c.Next)
	holder := call(context.Background(), 1)
	a := call(context.Background(), 2)
	z := call(context.Background(), 3)
	require.Equal(t, 2, b.Snapshot().Waiting)

	assert.True(t, a.Cancel())
	_, err := result(t, a)
	assert.ErrorIs(t, err, async.ErrCanceled)
	assert.Equal(t, 1, b.Snapshot().Waiting, "the canceled call left the queue at once")
	assert.Equal(t, 1, clk.PendingTasks(), "its timer is stopped")
	assert.False(t, a.Cancel())

	c.Finish(1)
	_, err = result(t, holder)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 3}, c.Started(), "the slot went to the next waiter; the canceled call never ran")
	c.Finish(3)
	_, err = result(t, z)
	require.NoError(t, err)
	assert.Equal(t, 1, b.Snapshot().AvailableSlots)
	assert.Zero(t, clk.PendingTasks())
	require.Len(t, rec.Events(), 1, "only the waited event")
}

// Cancelling a started call's future cancels the inner future; the slot comes back.
func TestAsyncCancelAfterStart(t *testing.T) {
	b, clk, _ := newManual(t, bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Second))
	c := contracttest.NewCalls()
	call := bulkhead.DecorateAsyncFunc(b, c.Next)
	holder := call(context.Background(), 1)
	queued := call(context.Background(), 2)
	c.Finish(1)
	_, err := result(t, holder)
	require.NoError(t, err)
	require.Equal(t, []int{1, 2}, c.Started())
	assert.Equal(t, 0, b.Snapshot().AvailableSlots)

	assert.False(t, queued.Cancel(), "the call had started")
	inner := c.Future(2)
	_, err = result(t, inner)
	assert.ErrorIs(t, err, async.ErrCanceled, "the inner future is canceled")
	assert.Equal(t, 1, b.Snapshot().AvailableSlots)
	assert.Zero(t, clk.PendingTasks())
}

// A queued call whose context ends leaves the queue and fails with an error matching
// ErrFull and the context's error.
func TestAsyncContextEndsWait(t *testing.T) {
	b, clk, rec := newManual(t, bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Hour))
	c := contracttest.NewCalls()
	call := bulkhead.DecorateAsyncFunc(b, c.Next)
	holder := call(context.Background(), 1)
	ctx, cancel := context.WithCancel(context.Background())
	queued := call(ctx, 2)
	require.Equal(t, 1, b.Snapshot().Waiting)

	cancel()
	wait, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	_, err := queued.Await(wait)
	requireFull(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, b.Snapshot().Waiting)
	assert.Zero(t, clk.PendingTasks())
	events := rec.Events()
	require.Len(t, events, 1)
	assert.Equal(t, bulkhead.EventRejected, events[0].Kind)

	// A done context with no slot free: rejected at once.
	_, err = result(t, call(ctx, 3))
	requireFull(t, err)
	assert.ErrorIs(t, err, context.Canceled)

	c.Finish(1)
	_, err = result(t, holder)
	require.NoError(t, err)
	assert.Equal(t, []int{1}, c.Started())
	assert.Equal(t, 1, b.Snapshot().AvailableSlots)
}

// 1,000 queued async calls cost no goroutine (SPEC AS-2); they then run one after the
// other, each completing at once, without recursing through the queue.
func TestAsyncQueueWithoutGoroutines(t *testing.T) {
	const n = 1000
	b, clk, _ := newManual(t, bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Hour))
	hold, release := async.NewPromise[int]()
	var order []int
	call := bulkhead.DecorateAsyncFunc(b, func(_ context.Context, i int) *async.Future[int] {
		if i == 0 {
			return hold
		}
		order = append(order, i)
		return async.Completed(i)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	_ = call(ctx, 0)
	before := runtime.NumGoroutine()
	futs := make([]*async.Future[int], n+1)
	for i := 1; i <= n; i++ {
		futs[i] = call(ctx, i)
	}
	assert.Equal(t, n, b.Snapshot().Waiting)
	assert.Equal(t, n, clk.PendingTasks())
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "queued calls park no goroutine")

	canceled := futs[500]
	assert.True(t, canceled.Cancel())
	assert.Equal(t, n-1, b.Snapshot().Waiting)

	release(0, nil)
	for i := 1; i <= n; i++ {
		v, err := result(t, futs[i])
		if i == 500 {
			assert.ErrorIs(t, err, async.ErrCanceled)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, i, v)
	}
	require.Len(t, order, n-1)
	for k, i := range order {
		want := k + 1
		if want >= 500 {
			want++
		}
		require.Equal(t, want, i, "FIFO")
	}
	assert.Equal(t, bulkhead.Snapshot{Instance: "Svc.Call", AvailableSlots: 1, MaxConcurrent: 1}, b.Snapshot())
	assert.Zero(t, clk.PendingTasks())
}

// Sync and async waiters share one FIFO queue.
func TestMixedSyncAsyncFIFO(t *testing.T) {
	b, _, _ := newManual(t, bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Hour))
	var mu sync.Mutex
	var order []string
	record := func(s string) {
		mu.Lock()
		order = append(order, s)
		mu.Unlock()
	}
	syncCall := bulkhead.DecorateFunc(b, func(_ context.Context, s string) (string, error) { record(s); return s, nil })
	asyncCall := bulkhead.DecorateAsyncFunc(b, func(_ context.Context, s string) *async.Future[string] {
		record(s)
		return async.Completed(s)
	})
	require.True(t, b.TryAcquire())
	a1 := asyncCall(context.Background(), "a1")
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = syncCall(context.Background(), "s2") })
	contracttest.Eventually(t, func() bool { return b.Snapshot().Waiting == 2 }, "sync waiter queued")
	a3 := asyncCall(context.Background(), "a3")
	b.Release()
	wg.Wait()
	_, err := a1.Await(context.Background())
	require.NoError(t, err)
	_, err = a3.Await(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"a1", "s2", "a3"}, order)
	assert.Equal(t, 1, b.Snapshot().AvailableSlots)
}

// A next that panics gives its slot back.
func TestAsyncReleasesOnPanic(t *testing.T) {
	b, _, _ := newManual(t, bulkhead.MaxConcurrent(1))
	call := bulkhead.DecorateAsyncFunc(b, func(context.Context, int) *async.Future[int] { panic("boom") })
	assert.PanicsWithValue(t, "boom", func() { call(context.Background(), 1) })
	assert.Equal(t, 1, b.Snapshot().AvailableSlots)
}

func TestAsyncDisabled(t *testing.T) {
	b, _, _ := newManual(t, bulkhead.MaxConcurrent(1), bulkhead.Enabled(false))
	c := contracttest.NewCalls()
	call := bulkhead.DecorateAsyncFunc(b, c.Next)
	_ = call(context.Background(), 1)
	f := call(context.Background(), 2)
	assert.True(t, pending(f))
	assert.Equal(t, []int{1, 2}, c.Started())
}

// Never more than MaxConcurrent async calls in flight, with sync and async callers on the
// System clock, under -race.
func TestAsyncNeverExceedsMaxConcurrent(t *testing.T) {
	const slots, goroutines, perG = 4, 50, 20
	b, err := bulkhead.New(bulkhead.MaxConcurrent(slots), bulkhead.MaxWait(time.Minute))
	require.NoError(t, err)
	var inFlight, maxSeen atomic.Int64
	enter := func() {
		n := inFlight.Add(1)
		for {
			m := maxSeen.Load()
			if n <= m || maxSeen.CompareAndSwap(m, n) {
				break
			}
		}
	}
	asyncCall := bulkhead.DecorateAsyncFunc(b, func(ctx context.Context, i int) *async.Future[int] {
		enter()
		return async.Go(ctx, func(context.Context) (int, error) {
			runtime.Gosched()
			inFlight.Add(-1)
			return i, nil
		})
	})
	syncCall := bulkhead.DecorateFunc(b, func(ctx context.Context, i int) (int, error) {
		enter()
		runtime.Gosched()
		inFlight.Add(-1)
		return i, nil
	})
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perG {
				var err error
				if (g+i)%2 == 0 {
					_, err = asyncCall(context.Background(), i).Await(context.Background())
				} else {
					_, err = syncCall(context.Background(), i)
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, maxSeen.Load(), int64(slots))
	contracttest.Eventually(t, func() bool { return b.Snapshot().AvailableSlots == slots }, "every slot back")
	assert.Zero(t, b.Snapshot().Waiting)
}

// On the System clock a queued async call times out through a real timer.
func TestAsyncMaxWaitSystemClock(t *testing.T) {
	b, err := bulkhead.New(bulkhead.MaxConcurrent(1), bulkhead.MaxWait(10*time.Millisecond))
	require.NoError(t, err)
	require.True(t, b.TryAcquire())
	call := bulkhead.DecorateAsyncFunc(b, func(context.Context, int) *async.Future[int] {
		t.Error("the call ran")
		return async.Completed(0)
	})
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = call(context.Background(), 1).Await(ctx)
	require.ErrorIs(t, err, bulkhead.ErrFull)
	assert.GreaterOrEqual(t, time.Since(start), 10*time.Millisecond)
	b.Release()
}

// While waiters queue, a slot that comes free is theirs: a newcomer cannot take it, even
// in the instant before it is handed over (here: a slot released while the oldest waiter
// is being started on the releasing goroutine).
func TestNoBargingWhileWaitersQueue(t *testing.T) {
	b, _, _ := newManual(t, bulkhead.MaxConcurrent(2), bulkhead.MaxWait(time.Hour))
	require.True(t, b.TryAcquire())
	require.True(t, b.TryAcquire())
	var barged, snapshot = true, bulkhead.Snapshot{}
	var started []int
	call := bulkhead.DecorateAsyncFunc(b, func(_ context.Context, i int) *async.Future[int] {
		started = append(started, i)
		if i == 1 {
			b.Release() // the test's second slot comes free while waiter 2 still queues
			snapshot = b.Snapshot()
			barged = b.TryAcquire()
		}
		return async.Completed(i)
	})
	w1 := call(context.Background(), 1)
	w2 := call(context.Background(), 2)
	require.Equal(t, 2, b.Snapshot().Waiting)

	b.Release()
	assert.False(t, barged, "a newcomer took the slot that waiter 2 was owed")
	assert.Equal(t, bulkhead.Snapshot{Instance: "Svc.Call", AvailableSlots: 1, MaxConcurrent: 2, Waiting: 1}, snapshot)
	assert.Equal(t, []int{1, 2}, started)
	for _, f := range []*async.Future[int]{w1, w2} {
		_, err := result(t, f)
		require.NoError(t, err)
	}
	assert.Equal(t, 2, b.Snapshot().AvailableSlots)
}

// A queued async call whose function panics when a released slot starts it: its future
// fails with async.ErrPanicked (its awaiters are not left waiting), the panic goes on up
// the goroutine that released the slot, and the slot comes back.
func TestAsyncPanicWhenStartedFromTheQueue(t *testing.T) {
	clk := clock.NewManual()
	b, err := bulkhead.New(bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Second), bulkhead.WithClock(clk))
	require.NoError(t, err)
	call := bulkhead.DecorateAsyncFunc(b, func(_ context.Context, k int) *async.Future[int] {
		if k == 0 {
			panic("boom")
		}
		f, _ := async.NewPromise[int]()
		return f
	})
	hold := call(context.Background(), 1)
	queued := call(context.Background(), 0)
	assert.Equal(t, 1, b.Snapshot().Waiting)
	assert.PanicsWithValue(t, "boom", func() { hold.Cancel() })
	_, done, err := queued.Result()
	require.True(t, done, "the queued call's future completed")
	require.ErrorIs(t, err, async.ErrPanicked)
	assert.Equal(t, 1, b.Snapshot().AvailableSlots, "the slot came back")
	assert.Zero(t, b.Snapshot().Waiting)
	assert.Zero(t, clk.PendingTasks(), "its MaxWait timer is stopped")
	next := call(context.Background(), 1)
	_, done, _ = next.Result()
	assert.False(t, done, "the next call runs in the slot")
	next.Cancel()
}

// A queued call whose function panics when a released slot starts it gives the slot back
// to the next waiter, which starts without waiting for its MaxWait, as the panic unwinds
// the goroutine that released the slot; a second one that panics too has its panic go
// on in place of the first, on that goroutine (fault: the slot came back while the
// dispatch that started the panicking call was still running, and the next waiter stayed
// queued with the slot free until its MaxWait rejected it).
func TestAsyncPanicWhenStartedFromTheQueueServesTheNext(t *testing.T) {
	clk := clock.NewManual()
	b, err := bulkhead.New(bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Second), bulkhead.WithClock(clk))
	require.NoError(t, err)
	call := bulkhead.DecorateAsyncFunc(b, func(_ context.Context, k int) *async.Future[int] {
		switch k {
		case 0:
			panic("boom")
		case 1:
			f, _ := async.NewPromise[int]()
			return f
		}
		return async.Completed(k)
	})
	hold := call(context.Background(), 1)
	panicking := call(context.Background(), 0)
	again := call(context.Background(), 0) // panics too, as the first unwinds
	next := call(context.Background(), 2)
	assert.Equal(t, 3, b.Snapshot().Waiting)
	assert.PanicsWithValue(t, "boom", func() { hold.Cancel() }, "on the caller's goroutine, where it can be recovered")
	for _, f := range []*async.Future[int]{panicking, again} {
		_, _, err = f.Result()
		require.ErrorIs(t, err, async.ErrPanicked)
	}
	// 10s bounds a failure only: the manual clock does not move, so no MaxWait passes.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := next.Await(ctx)
	require.NoError(t, err, "the next waiter was started")
	assert.Equal(t, 2, v)
	assert.Equal(t, 1, b.Snapshot().AvailableSlots, "and its slot came back")
	assert.Zero(t, b.Snapshot().Waiting)
}

// A call whose future is complete when its function returns gives its slot back at once,
// on the caller's goroutine, starting the oldest waiter there: when that waiter's
// function panics, the slot is given back once, not twice (fault: MaxConcurrent(1) then
// had 2 slots free).
func TestAsyncPanicOfAWaiterStartedByACompletedCall(t *testing.T) {
	b, err := bulkhead.New(bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Second), bulkhead.WithClock(clock.NewManual()))
	require.NoError(t, err)
	var call func(context.Context, int) *async.Future[int]
	call = bulkhead.DecorateAsyncFunc(b, func(ctx context.Context, k int) *async.Future[int] {
		if k == 0 {
			panic("boom")
		}
		call(ctx, 0) // queued behind this call, which holds the only slot
		return async.Completed(k)
	})
	assert.PanicsWithValue(t, "boom", func() { call(context.Background(), 1) })
	assert.Equal(t, 1, b.Snapshot().AvailableSlots)
	assert.True(t, b.TryAcquire())
	assert.False(t, b.TryAcquire(), "one slot, not two")
	b.Release()
}
