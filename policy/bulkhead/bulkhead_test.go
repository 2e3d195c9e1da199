package bulkhead_test

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

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
)

func newManual(t *testing.T, opts ...bulkhead.Option) (*bulkhead.Bulkhead, *clock.Manual, *contracttest.Recorder) {
	t.Helper()
	clk := clock.NewManual()
	rec := &contracttest.Recorder{}
	opts = append([]bulkhead.Option{bulkhead.WithClock(clk), bulkhead.OnEvent(rec.Listen),
		bulkhead.Name("Svc.Call")}, opts...)
	b, err := bulkhead.New(opts...)
	require.NoError(t, err)
	return b, clk, rec
}

func requireFull(t *testing.T, err error) {
	t.Helper()
	require.ErrorIs(t, err, bulkhead.ErrFull)
	var fe interface{ InstanceID() string }
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "Svc.Call", fe.InstanceID())
	var r policy.Rejection
	require.ErrorAs(t, err, &r)
	assert.Equal(t, bulkhead.Layer, r.RejectedBy())
}

// With MaxWait 0 a call finding every slot taken is rejected at once; the function is not
// called, and the slot comes back when the admitted call returns.
func TestSyncRejectsAtOnce(t *testing.T) {
	b, clk, rec := newManual(t, bulkhead.MaxConcurrent(1))
	var inner, outer decorate.Func[int, string]
	calls := 0
	outer = bulkhead.DecorateFunc(b, func(ctx context.Context, depth int) (string, error) {
		calls++
		assert.Equal(t, 0, b.Snapshot().AvailableSlots)
		if depth == 0 {
			_, err := inner(ctx, 1) // the only slot is ours
			requireFull(t, err)
			assert.Same(t, b.Rejection(), err)
		}
		return "ok", nil
	})
	inner = outer

	got, err := outer(context.Background(), 0)
	require.NoError(t, err)
	assert.Equal(t, "ok", got)
	assert.Equal(t, 1, calls, "the rejected call never ran")
	assert.Equal(t, 1, b.Snapshot().AvailableSlots)
	assert.Zero(t, clk.PendingTasks())

	events := rec.Events()
	require.Len(t, events, 1)
	assert.Equal(t, bulkhead.EventRejected, events[0].Kind)
	assert.Equal(t, "Svc.Call", events[0].Instance)
	assert.Zero(t, events[0].Wait)
	assert.Same(t, b.Rejection(), events[0].Err)
}

// A function that panics gives its slot back.
func TestSyncReleasesOnPanic(t *testing.T) {
	b, _, _ := newManual(t, bulkhead.MaxConcurrent(1))
	call := bulkhead.DecorateFunc(b, func(context.Context, struct{}) (int, error) { panic("boom") })
	assert.PanicsWithValue(t, "boom", func() { _, _ = call(context.Background(), struct{}{}) })
	assert.Equal(t, 1, b.Snapshot().AvailableSlots)
}

// Never more than MaxConcurrent calls in flight, with 50 goroutines on the System clock.
func TestSyncNeverExceedsMaxConcurrent(t *testing.T) {
	const slots, goroutines, perG = 5, 50, 40
	b, err := bulkhead.New(bulkhead.MaxConcurrent(slots), bulkhead.MaxWait(time.Minute))
	require.NoError(t, err)
	var inFlight, maxSeen, done atomic.Int64
	call := bulkhead.DecorateFunc(b, func(ctx context.Context, _ int) (int, error) {
		n := inFlight.Add(1)
		for {
			m := maxSeen.Load()
			if n <= m || maxSeen.CompareAndSwap(m, n) {
				break
			}
		}
		for range 3 {
			runtime.Gosched()
		}
		_ = clock.System().Sleep(ctx, 50*time.Microsecond)
		inFlight.Add(-1)
		return 0, nil
	})
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range perG {
				if _, err := call(context.Background(), 0); err != nil {
					t.Error(err)
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int64(goroutines*perG), done.Load())
	assert.LessOrEqual(t, maxSeen.Load(), int64(slots))
	assert.Equal(t, int64(slots), maxSeen.Load(), "with 50 goroutines every slot was used")
	assert.Equal(t, bulkhead.Snapshot{AvailableSlots: slots, MaxConcurrent: slots}, b.Snapshot())
}

// Waiters get slots in arrival order; each publishes how long it waited.
func TestSyncFIFO(t *testing.T) {
	b, clk, rec := newManual(t, bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Hour))
	require.NoError(t, b.Acquire(context.Background())) // the test holds the only slot

	var mu sync.Mutex
	var order []int
	call := bulkhead.DecorateFunc(b, func(_ context.Context, i int) (int, error) {
		mu.Lock()
		order = append(order, i)
		mu.Unlock()
		return i, nil
	})
	const n = 6
	var wg sync.WaitGroup
	for i := 1; i <= n; i++ {
		wg.Go(func() {
			_, err := call(context.Background(), i)
			assert.NoError(t, err)
		})
		contracttest.Eventually(t, func() bool { return b.Snapshot().Waiting == i }, "waiter queued")
	}
	assert.Equal(t, n, clk.PendingTasks(), "one MaxWait timer per waiter")
	clk.Advance(10 * time.Millisecond)
	b.Release()
	wg.Wait()

	assert.Equal(t, []int{1, 2, 3, 4, 5, 6}, order)
	assert.Zero(t, clk.PendingTasks())
	assert.Equal(t, bulkhead.Snapshot{Instance: "Svc.Call", AvailableSlots: 1, MaxConcurrent: 1}, b.Snapshot())
	events := rec.Events()
	require.Len(t, events, n)
	for _, e := range events {
		assert.Equal(t, bulkhead.EventWaited, e.Kind)
		assert.Equal(t, 10*time.Millisecond, e.Wait)
	}
}

// A released slot is handed to the oldest waiter within Release itself: a newcomer finds
// no free slot to barge in on, even before the waiter's goroutine has run.
func TestSyncHandOffNoBarging(t *testing.T) {
	b, _, _ := newManual(t, bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Hour))
	require.NoError(t, b.Acquire(context.Background()))
	proceed := make(chan struct{})
	var ran atomic.Bool
	call := bulkhead.DecorateFunc(b, func(context.Context, struct{}) (int, error) {
		ran.Store(true)
		<-proceed
		return 0, nil
	})
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = call(context.Background(), struct{}{}) })
	contracttest.Eventually(t, func() bool { return b.Snapshot().Waiting == 1 }, "waiter queued")

	b.Release()
	// The slot now belongs to the waiter, whether or not its goroutine has run yet.
	assert.Equal(t, bulkhead.Snapshot{Instance: "Svc.Call", AvailableSlots: 0, MaxConcurrent: 1, Waiting: 0}, b.Snapshot())
	assert.False(t, b.TryAcquire())
	close(proceed)
	wg.Wait()
	assert.True(t, ran.Load())
	assert.True(t, b.TryAcquire())
	b.Release()
}

// A waiter is rejected after MaxWait, driven by the manual clock.
func TestSyncMaxWait(t *testing.T) {
	b, clk, rec := newManual(t, bulkhead.MaxConcurrent(1), bulkhead.MaxWait(100*time.Millisecond))
	require.True(t, b.TryAcquire())
	var ran atomic.Bool
	call := bulkhead.DecorateFunc(b, func(context.Context, struct{}) (int, error) { ran.Store(true); return 1, nil })
	result := make(chan error, 1)
	go func() {
		_, err := call(context.Background(), struct{}{})
		result <- err
	}()
	contracttest.Eventually(t, func() bool { return b.Snapshot().Waiting == 1 }, "waiter queued")
	assert.Equal(t, 1, clk.PendingTasks())

	clk.Advance(99 * time.Millisecond)
	assert.Equal(t, 1, b.Snapshot().Waiting, "still waiting before MaxWait")

	clk.Advance(time.Millisecond)
	err := <-result
	requireFull(t, err)
	assert.Same(t, b.Rejection(), err)
	assert.False(t, ran.Load())
	assert.Equal(t, bulkhead.Snapshot{Instance: "Svc.Call", AvailableSlots: 0, MaxConcurrent: 1}, b.Snapshot())
	assert.Zero(t, clk.PendingTasks())

	events := rec.Events()
	require.Len(t, events, 1)
	assert.Equal(t, bulkhead.EventRejected, events[0].Kind)
	assert.Equal(t, 100*time.Millisecond, events[0].Wait)
	assert.Equal(t, 100*time.Millisecond, events[0].At)

	b.Release()
	assert.Equal(t, 1, b.Snapshot().AvailableSlots)
}

// A context that ends during the wait rejects the call with an error matching ErrFull and
// the context's error; the waiter leaves the queue at once.
func TestSyncContextEndsWait(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"cancel", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
			context.Canceled},
		{"deadline", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			return expiringCtx{ctx}, cancel
		}, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, clk, rec := newManual(t, bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Hour))
			require.True(t, b.TryAcquire())
			call := bulkhead.DecorateFunc(b, func(context.Context, struct{}) (int, error) {
				t.Error("the function ran")
				return 0, nil
			})
			ctx, cancel := tc.ctx()
			defer cancel()
			result := make(chan error, 1)
			go func() {
				_, err := call(ctx, struct{}{})
				result <- err
			}()
			contracttest.Eventually(t, func() bool { return b.Snapshot().Waiting == 1 }, "waiter queued")
			cancel()
			err := <-result
			requireFull(t, err)
			assert.ErrorIs(t, err, tc.want)
			assert.Zero(t, b.Snapshot().Waiting)
			assert.Zero(t, clk.PendingTasks(), "the MaxWait timer is stopped")
			events := rec.Events()
			require.Len(t, events, 1)
			assert.Equal(t, bulkhead.EventRejected, events[0].Kind)
			assert.Same(t, err, events[0].Err)

			b.Release()
			assert.Equal(t, 1, b.Snapshot().AvailableSlots)
		})
	}
}

// expiringCtx is a context whose "deadline" passes when the test cancels it.
type expiringCtx struct{ context.Context }

func (c expiringCtx) Err() error {
	if c.Context.Err() != nil {
		return context.DeadlineExceeded
	}
	return nil
}

func TestAcquireRelease(t *testing.T) {
	b, _, rec := newManual(t, bulkhead.MaxConcurrent(2))
	require.NoError(t, b.Acquire(context.Background()))
	require.True(t, b.TryAcquire())
	assert.False(t, b.TryAcquire())
	err := b.Acquire(context.Background())
	requireFull(t, err)
	assert.Equal(t, 0, b.Snapshot().AvailableSlots)
	b.Release()
	b.Release()
	assert.Equal(t, 2, b.Snapshot().AvailableSlots)
	assert.Len(t, rec.Events(), 2)
}

func TestDisabled(t *testing.T) {
	b, clk, rec := newManual(t, bulkhead.MaxConcurrent(1), bulkhead.Enabled(false))
	calls := 0
	var call decorate.Func[int, int]
	call = bulkhead.DecorateFunc(b, func(ctx context.Context, depth int) (int, error) {
		calls++
		if depth < 3 {
			return call(ctx, depth+1)
		}
		return depth, nil
	})
	got, err := call(context.Background(), 0)
	require.NoError(t, err)
	assert.Equal(t, 3, got)
	assert.Equal(t, 4, calls)
	assert.True(t, b.TryAcquire())
	require.NoError(t, b.Acquire(context.Background()))
	b.Release()
	// A disabled bulkhead, as a disabled limiter, refuses a nil or done ctx with its error.
	for _, o := range ctxtest.OverContexts() {
		require.ErrorIs(t, b.Acquire(o.Ctx), o.Want, o.Name)
	}
	assert.Equal(t, 1, b.Snapshot().AvailableSlots)
	assert.Equal(t, bulkhead.Snapshot{Instance: "Svc.Call", AvailableSlots: 1, MaxConcurrent: 1}, b.Snapshot())
	assert.Empty(t, rec.Events())
	assert.Zero(t, clk.PendingTasks())
}

// Admitted and rejected calls allocate nothing.
func TestSyncAllocations(t *testing.T) {
	for _, maxWait := range []time.Duration{0, time.Second} {
		b, err := bulkhead.New(bulkhead.MaxConcurrent(1), bulkhead.MaxWait(maxWait))
		require.NoError(t, err)
		call := bulkhead.DecorateFunc(b, func(ctx context.Context, n int) (int, error) { return n, nil })
		ctx := context.Background()
		assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = call(ctx, 1) }), "admitted, maxWait %v", maxWait)
	}

	b, err := bulkhead.New(bulkhead.MaxConcurrent(1), bulkhead.OnEvent(func(policy.Event) {}))
	require.NoError(t, err)
	call := bulkhead.DecorateFunc(b, func(ctx context.Context, n int) (int, error) { return n, nil })
	ctx := context.Background()
	require.True(t, b.TryAcquire())
	var rejected error
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, rejected = call(ctx, 1) }), "rejected")
	requireFullAny(t, rejected)
	b.Release()
}

func requireFullAny(t *testing.T, err error) {
	t.Helper()
	require.True(t, errors.Is(err, bulkhead.ErrFull), "got %v", err)
}

func TestNewPolicy(t *testing.T) {
	b, _, _ := newManual(t, bulkhead.MaxConcurrent(1))
	p := bulkhead.NewPolicy[string](b)
	assert.Equal(t, bulkhead.Layer, p.Layer())
	var call func(context.Context) (string, error)
	call = p.Decorate(func(ctx context.Context) (string, error) {
		_, err := call(ctx)
		return "outer", err
	})
	got, err := call(context.Background())
	requireFull(t, err)
	assert.Equal(t, "outer", got)
	assert.Equal(t, 1, b.Snapshot().AvailableSlots)
}
