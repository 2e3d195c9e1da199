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
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
)

// SPEC RC-1: raising MaxConcurrent hands the new slots to the waiting calls at once,
// oldest first; the others keep waiting.
func TestReconfigure_RC1_RaiseAdmitsWaitersFIFO(t *testing.T) {
	b, clk, rec := newManual(t, bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Second))
	c := contracttest.NewCalls()
	call := bulkhead.DecorateAsyncFunc(b, c.Next)
	futs := map[int]*async.Future[string]{}
	for i := 1; i <= 5; i++ {
		futs[i] = call(context.Background(), i)
	}
	require.Equal(t, []int{1}, c.Started())
	clk.Advance(200 * time.Millisecond)

	require.NoError(t, b.Reconfigure(bulkhead.Config{PriorityReserve: 0.5, MaxConcurrent: 3, MaxWait: time.Second}))
	assert.Equal(t, []int{1, 2, 3}, c.Started(), "the two oldest waiters start within Reconfigure")
	assert.Equal(t, bulkhead.Snapshot{Instance: "Svc.Call", AvailableSlots: 0, MaxConcurrent: 3, Waiting: 2}, b.Snapshot())
	assert.Equal(t, 2, clk.PendingTasks(), "the started calls' MaxWait timers are stopped")
	assert.Equal(t, []policy.EventKind{policy.ConfigChanged, bulkhead.EventWaited, bulkhead.EventWaited}, rec.Kinds())
	assert.Equal(t, 200*time.Millisecond, rec.Events()[1].Wait)

	c.Finish(1)
	assert.Equal(t, []int{1, 2, 3, 4}, c.Started())
	for _, i := range []int{2, 3, 4} {
		c.Finish(i)
	}
	assert.Equal(t, []int{1, 2, 3, 4, 5}, c.Started())
	c.Finish(5)
	for i := 1; i <= 5; i++ {
		_, err := result(t, futs[i])
		require.NoError(t, err)
	}
	assert.Equal(t, bulkhead.Snapshot{Instance: "Svc.Call", AvailableSlots: 3, MaxConcurrent: 3}, b.Snapshot())
	assert.Zero(t, clk.PendingTasks())
}

// SPEC RC-1: raising MaxConcurrent wakes blocked synchronous waiters too.
func TestReconfigure_RC1_RaiseAdmitsSyncWaiters(t *testing.T) {
	b, _, _ := newManual(t, bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Hour))
	require.True(t, b.TryAcquire())
	var wg sync.WaitGroup
	for i := 1; i <= 2; i++ {
		wg.Go(func() { assert.NoError(t, b.Acquire(context.Background())) })
		contracttest.Eventually(t, func() bool { return b.Snapshot().Waiting == i }, "waiter queued")
	}
	require.NoError(t, b.Reconfigure(bulkhead.Config{PriorityReserve: 0.5, MaxConcurrent: 3, MaxWait: time.Hour}))
	wg.Wait()
	assert.Equal(t, bulkhead.Snapshot{Instance: "Svc.Call", AvailableSlots: 0, MaxConcurrent: 3}, b.Snapshot())
	for range 3 {
		b.Release()
	}
	assert.Equal(t, 3, b.Snapshot().AvailableSlots)
}

// SPEC RC-1: lowering MaxConcurrent cancels no call in flight; new calls are refused (or
// wait) until the calls in flight are fewer than the new limit.
func TestReconfigure_RC1_LowerKeepsCallsInFlight(t *testing.T) {
	b, clk, rec := newManual(t, bulkhead.MaxConcurrent(3))
	c := contracttest.NewCalls()
	call := bulkhead.DecorateAsyncFunc(b, c.Next)
	futs := []*async.Future[string]{call(context.Background(), 1), call(context.Background(), 2), call(context.Background(), 3)}

	require.NoError(t, b.Reconfigure(bulkhead.Config{PriorityReserve: 0.5, MaxConcurrent: 1}))
	for _, f := range futs {
		assert.True(t, pending(f), "a call in flight goes on")
	}
	assert.Equal(t, bulkhead.Snapshot{Instance: "Svc.Call", AvailableSlots: 0, MaxConcurrent: 1}, b.Snapshot())

	refused := func() {
		t.Helper()
		_, err := result(t, call(context.Background(), 0))
		requireFull(t, err)
		assert.False(t, b.TryAcquire())
	}
	refused()
	c.Finish(1)
	refused() // 2 in flight
	c.Finish(2)
	refused() // 1 in flight: not fewer than 1
	assert.Equal(t, 0, b.Snapshot().AvailableSlots)

	// A waiter (MaxWait raised meanwhile) gets the slot once the last call is over.
	require.NoError(t, b.Reconfigure(bulkhead.Config{PriorityReserve: 0.5, MaxConcurrent: 1, MaxWait: time.Second}))
	waiter := call(context.Background(), 4)
	assert.Equal(t, []int{1, 2, 3}, c.Started())
	c.Finish(3)
	assert.Equal(t, []int{1, 2, 3, 4}, c.Started())
	c.Finish(4)
	_, err := result(t, waiter)
	require.NoError(t, err)
	assert.Equal(t, bulkhead.Snapshot{Instance: "Svc.Call", AvailableSlots: 1, MaxConcurrent: 1}, b.Snapshot())
	for _, f := range futs {
		v, err := result(t, f)
		require.NoError(t, err)
		assert.Equal(t, "done", v)
	}
	assert.Zero(t, clk.PendingTasks())
	assert.Equal(t, 6, rec.Count(bulkhead.EventRejected), "three refusals of a call and of TryAcquire")
}

// SPEC RC-1: a new MaxWait applies to the calls that arrive after the change; a call
// already waiting keeps the MaxWait it arrived with.
func TestReconfigure_RC1_MaxWaitForNewArrivals(t *testing.T) {
	b, clk, rec := newManual(t, bulkhead.MaxConcurrent(1), bulkhead.MaxWait(100*time.Millisecond))
	require.True(t, b.TryAcquire())
	c := contracttest.NewCalls()
	call := bulkhead.DecorateAsyncFunc(b, c.Next)

	early := call(context.Background(), 1)
	require.NoError(t, b.Reconfigure(bulkhead.Config{PriorityReserve: 0.5, MaxConcurrent: 1, MaxWait: time.Second}))
	late := call(context.Background(), 2)

	clk.Advance(100 * time.Millisecond)
	_, err := result(t, early)
	requireFull(t, err)
	assert.True(t, pending(late), "the late call waits up to the new MaxWait")
	clk.Advance(900 * time.Millisecond)
	_, err = result(t, late)
	requireFull(t, err)
	var waits []time.Duration
	for _, e := range rec.Of(bulkhead.EventRejected) {
		waits = append(waits, e.Wait)
	}
	assert.Equal(t, []time.Duration{100 * time.Millisecond, time.Second}, waits)

	// Synchronous waiters alike: one waiting with 1s; MaxWait 0 now rejects newcomers at
	// once, and the waiter still gets the next slot.
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, b.Acquire(context.Background())) })
	contracttest.Eventually(t, func() bool { return b.Snapshot().Waiting == 1 }, "waiter queued")
	require.NoError(t, b.Reconfigure(bulkhead.Config{PriorityReserve: 0.5, MaxConcurrent: 1}))
	requireFull(t, b.Acquire(context.Background()))
	assert.Equal(t, 1, clk.PendingTasks(), "no timer for a newcomer with MaxWait 0")
	clk.Advance(999 * time.Millisecond)
	assert.Equal(t, 1, b.Snapshot().Waiting)
	b.Release()
	wg.Wait()
	b.Release()
	assert.Equal(t, 1, b.Snapshot().AvailableSlots)
	assert.Empty(t, c.Started())
}

// SPEC RC-2: an invalid configuration is refused with New's error and changes nothing.
func TestReconfigure_RC2_InvalidChangesNothing(t *testing.T) {
	b, _, rec := newManual(t, bulkhead.MaxConcurrent(2), bulkhead.MaxWait(time.Second))
	want := bulkhead.Config{PriorityReserve: 0.5, MaxConcurrent: 2, MaxWait: time.Second}
	require.True(t, b.TryAcquire())
	for _, tc := range []struct {
		c         bulkhead.Config
		code, key string
	}{
		{bulkhead.Config{PriorityReserve: 0.5, MaxConcurrent: 0, MaxWait: time.Second}, r4c.OutOfRange, "bulkhead.maxConcurrent"},
		{bulkhead.Config{PriorityReserve: 0.5, MaxConcurrent: -3}, r4c.OutOfRange, "bulkhead.maxConcurrent"},
		{bulkhead.Config{PriorityReserve: 0.5, MaxConcurrent: 5, MaxWait: -time.Millisecond}, r4c.NegativeDuration, "bulkhead.maxWait"},
		{bulkhead.Config{PriorityReserve: 0.5, MaxConcurrent: 0, Disabled: true}, r4c.OutOfRange, "bulkhead.maxConcurrent"},
	} {
		err := b.Reconfigure(tc.c)
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce, "%+v", tc.c)
		assert.Equal(t, tc.code, ce.Code)
		assert.Equal(t, tc.key, ce.Key)
		_, newErr := bulkhead.New(bulkhead.WithConfig(tc.c))
		assert.Equal(t, newErr, err, "the error New returns")
		assert.Equal(t, err, b.CheckReconfigure(tc.c), "CheckReconfigure agrees")
		assert.Equal(t, want, b.Config())
		assert.Equal(t, bulkhead.Snapshot{Instance: "Svc.Call", AvailableSlots: 1, MaxConcurrent: 2}, b.Snapshot())
	}
	assert.Empty(t, rec.Events())
	assert.True(t, b.TryAcquire(), "two slots still")
	assert.False(t, b.TryAcquire())
}

// SPEC RC-2: whether a bulkhead is enabled cannot change live: R4C-REG-012, and nothing
// changes, not even the settings that could have.
func TestReconfigure_RC2_EnabledIsNotLive(t *testing.T) {
	b, _, rec := newManual(t, bulkhead.MaxConcurrent(2))
	c := bulkhead.Config{PriorityReserve: 0.5, MaxConcurrent: 4, MaxWait: time.Second, Disabled: true}
	err := b.Reconfigure(c)
	var ce *policy.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, r4c.NotLive, ce.Code)
	assert.Equal(t, "R4C-REG-012", ce.Code)
	assert.Equal(t, "bulkhead.enabled", ce.Key)
	assert.Equal(t, "false", ce.Value)
	assert.Equal(t, err, b.CheckReconfigure(c))
	assert.Equal(t, bulkhead.Config{PriorityReserve: 0.5, MaxConcurrent: 2}, b.Config())
	assert.Empty(t, rec.Events())

	// Built disabled, it stays disabled; its other settings change.
	d, _, drec := newManual(t, bulkhead.MaxConcurrent(1), bulkhead.Enabled(false))
	assert.Equal(t, r4c.NotLive, r4c.CodeOf(d.Reconfigure(bulkhead.Config{PriorityReserve: 0.5, MaxConcurrent: 1})))
	require.NoError(t, d.Reconfigure(bulkhead.Config{PriorityReserve: 0.5, MaxConcurrent: 3, Disabled: true}))
	assert.Equal(t, bulkhead.Snapshot{Instance: "Svc.Call", AvailableSlots: 3, MaxConcurrent: 3}, d.Snapshot())
	assert.True(t, d.TryAcquire())
	assert.Equal(t, []string{"maxConcurrent"}, drec.Events()[0].Changed)
}

// SPEC RC-3: ConfigChanged names the attributes that changed, sorted, as the
// configuration keys name them; a configuration equal to the one in force publishes
// nothing.
func TestReconfigure_RC3_EventListsChanges(t *testing.T) {
	b, clk, rec := newManual(t, bulkhead.MaxConcurrent(2))
	clk.Advance(time.Minute)
	require.NoError(t, b.Reconfigure(bulkhead.Config{PriorityReserve: 0.5, MaxConcurrent: 2}))
	require.NoError(t, b.CheckReconfigure(bulkhead.Config{PriorityReserve: 0.5, MaxConcurrent: 9, MaxWait: time.Second}))
	assert.Empty(t, rec.Events(), "nothing changed, nothing applied")

	require.NoError(t, b.Reconfigure(bulkhead.Config{PriorityReserve: 0.5, MaxConcurrent: 3}))
	require.NoError(t, b.Reconfigure(bulkhead.Config{PriorityReserve: 0.5, MaxConcurrent: 3, MaxWait: time.Second}))
	require.NoError(t, b.Reconfigure(bulkhead.Config{PriorityReserve: 0.5, MaxConcurrent: 1, MaxWait: 0}))
	require.NoError(t, b.Reconfigure(bulkhead.Config{PriorityReserve: 0.5, MaxConcurrent: 1, MaxWait: 0}))
	assert.Equal(t, []policy.Event{
		{Kind: policy.ConfigChanged, Instance: "Svc.Call", At: time.Minute, Changed: []string{"maxConcurrent"}},
		{Kind: policy.ConfigChanged, Instance: "Svc.Call", At: time.Minute, Changed: []string{"maxWait"}},
		{Kind: policy.ConfigChanged, Instance: "Svc.Call", At: time.Minute, Changed: []string{"maxConcurrent", "maxWait"}},
	}, rec.Events())
	assert.Equal(t, bulkhead.Config{PriorityReserve: 0.5, MaxConcurrent: 1}, b.Config())
}

// SPEC RC-1 under the race detector: synchronous and asynchronous calls, waiting and
// not, while MaxConcurrent and MaxWait change. No slot is lost or made up: once every
// call is over, exactly the final MaxConcurrent slots are free; calls in flight never
// exceed the largest limit applied.
func TestReconfigure_RC1_ConcurrentCalls(t *testing.T) {
	const most = 4
	b, err := bulkhead.New(bulkhead.MaxConcurrent(2), bulkhead.MaxWait(time.Hour))
	require.NoError(t, err)
	var inFlight, peak, done atomic.Int64
	enter := func() {
		n := inFlight.Add(1)
		for m := peak.Load(); n > m && !peak.CompareAndSwap(m, n); m = peak.Load() {
		}
	}
	call := bulkhead.DecorateFunc(b, func(context.Context, int) (int, error) {
		enter()
		runtime.Gosched()
		inFlight.Add(-1)
		return 0, nil
	})
	acall := bulkhead.DecorateAsyncFunc(b, func(_ context.Context, _ int) *async.Future[int] {
		enter()
		f, complete := async.NewPromise[int]()
		go func() {
			runtime.Gosched()
			inFlight.Add(-1)
			complete(0, nil)
		}()
		return f
	})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 6 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var err error
				if g%2 == 0 {
					_, err = call(context.Background(), i)
				} else {
					_, err = acall(context.Background(), i).Await(context.Background())
				}
				if err != nil {
					requireFullAny(t, err) // MaxWait 0 for a while
				}
				done.Add(1)
			}
		})
	}
	n := 0
	for ; n < 400 || done.Load() < 3000; n++ {
		c := bulkhead.Config{PriorityReserve: 0.5, MaxConcurrent: 1 + n%most}
		if n%5 != 0 {
			c.MaxWait = time.Hour
		}
		require.NoError(t, b.Reconfigure(c))
		runtime.Gosched()
	}
	final := bulkhead.Config{PriorityReserve: 0.5, MaxConcurrent: 3, MaxWait: time.Hour}
	require.NoError(t, b.Reconfigure(final))
	close(stop)
	wg.Wait()
	contracttest.Eventually(t, func() bool { return inFlight.Load() == 0 }, "every call over")
	contracttest.Eventually(t, func() bool { return b.Snapshot().AvailableSlots == 3 }, "every slot back")

	assert.LessOrEqual(t, peak.Load(), int64(most))
	assert.Equal(t, final, b.Config())
	assert.Equal(t, bulkhead.Snapshot{AvailableSlots: 3, MaxConcurrent: 3}, b.Snapshot())
	for range 3 {
		require.True(t, b.TryAcquire())
	}
	assert.False(t, b.TryAcquire(), "no slot made up")
}

// A running bulkhead gets more slots: the calls waiting start at once, oldest first.
// Whether it is enabled cannot change while it runs.
func TestReconfigure_MoreSlotsStartTheWaiters(t *testing.T) {
	var changes []string
	b, err := bulkhead.New(bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Second),
		bulkhead.WithClock(clock.NewManual()), bulkhead.Name("Backend.Fetch"),
		bulkhead.OnEvent(func(e policy.Event) {
			if e.Kind == policy.ConfigChanged {
				changes = append(changes, e.String())
			}
		}))
	require.NoError(t, err)
	var started []string
	fetch := bulkhead.DecorateAsyncFunc(b, func(_ context.Context, key string) *async.Future[string] {
		started = append(started, key)
		f, _ := async.NewPromise[string]()
		return f
	})
	ctx := context.Background()
	for _, key := range []string{"a", "b", "c"} {
		fetch(ctx, key)
	}
	assert.Equal(t, []string{"a"}, started)
	assert.Equal(t, 2, b.Snapshot().Waiting)

	c := b.Config()
	c.MaxConcurrent = 3
	require.NoError(t, b.Reconfigure(c))
	assert.Equal(t, []string{"ConfigChanged Backend.Fetch at=0s changed=maxConcurrent"}, changes)
	assert.Equal(t, []string{"a", "b", "c"}, started)
	assert.Zero(t, b.Snapshot().Waiting)

	c.Disabled = true
	assert.EqualError(t, b.Reconfigure(c),
		`R4C-REG-012: bulkhead.enabled = "false": enabled cannot change on a running bulkhead (it is true): build a new one`)
}
