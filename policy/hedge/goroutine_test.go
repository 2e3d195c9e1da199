package hedge_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/hedge"
)

// SPEC HG-17: 1,000 hedged calls pending (their dependency never answers), each with
// both attempts in flight, add no goroutine: the delays are clock timers and the hooks
// on the contexts are the standard library's. Cancelling them leaves nothing behind.
func TestHG17_PendingCallsAddNoGoroutine(t *testing.T) {
	h, clk, _ := newManual(t, hedge.Budget(false))
	cb, err := circuitbreaker.New(circuitbreaker.WithClock(clk))
	require.NoError(t, err)
	bh, err := bulkhead.New(bulkhead.MaxConcurrent(2000), bulkhead.WithClock(clk))
	require.NoError(t, err)
	d := newDep(clk, never())
	call := hedge.DecorateAsyncFunc(h, circuitbreaker.Decorate[decorate.AsyncFunc[string, string], string, string](cb, bulkhead.Decorate[decorate.AsyncFunc[string, string], string, string](bh, d.call)))
	parent, cancelAll := context.WithCancel(context.Background())
	defer cancelAll()

	before := runtime.NumGoroutine()
	futs := make([]*async.Future[string], 1000)
	for i := range futs {
		futs[i] = call(parent, "q")
	}
	assert.Equal(t, 1000, clk.PendingTasks(), "one timer per call")
	clk.Advance(time.Second)
	assert.Equal(t, 2000, d.attempts())
	assert.Zero(t, bh.Snapshot().AvailableSlots)
	assert.Zero(t, clk.PendingTasks(), "MaxAttempts reached: no timer")
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "no goroutine per pending call")

	for _, f := range futs[:500] {
		f.Cancel()
	}
	cancelAll() // the other 500 end with their context
	for _, f := range futs[500:] {
		contracttest.Eventually(t, func() bool { return !pending(f) }, "the call ends with its context")
		_, err := result(t, f)
		assert.ErrorIs(t, err, context.Canceled)
	}
	contracttest.Eventually(t, func() bool { return bh.Snapshot().AvailableSlots == 2000 }, "every slot back")
	assert.Zero(t, clk.PendingTasks())
	assert.LessOrEqual(t, ctxtest.SettleGoroutines(before), before)
	goleak.VerifyNone(t, goleak.IgnoreCurrent())
}

// SPEC HG-7, HG-9: on the system clock, calls whose attempts answer, fail and are
// canceled in every order from several goroutines each end exactly once, start at most
// MaxAttempts attempts, and leave no attempt context, timer or goroutine behind (run with
// -race).
func TestHG9_RacingOutcomes(t *testing.T) {
	errFlaky := errors.New("flaky")
	h, err := hedge.New(hedge.MaxAttempts(3), hedge.Delay(50*time.Microsecond), hedge.Budget(false))
	require.NoError(t, err)
	var open atomic.Int64    // attempt contexts not yet canceled
	var running atomic.Int64 // attempts' goroutines not yet returned
	type arg struct {
		n       int
		mayHang bool // the caller cancels the call: an attempt may answer only then
	}
	var mu sync.Mutex
	attempts := map[int]int{}
	next := func(ctx context.Context, a arg) *async.Future[int] {
		mu.Lock()
		attempts[a.n]++
		mu.Unlock()
		open.Add(1)
		context.AfterFunc(ctx, func() { open.Add(-1) })
		f, complete := async.NewPromise[int]()
		r := rand.IntN(2)
		if a.mayHang {
			r = rand.IntN(4)
		}
		running.Add(1)
		go func() {
			defer running.Add(-1)
			for range rand.IntN(50) {
				runtime.Gosched()
			}
			switch r {
			case 0:
				complete(a.n, nil)
			case 1:
				complete(0, errFlaky)
			case 2:
				<-ctx.Done()
				complete(0, ctx.Err())
			default:
				<-ctx.Done() // answers only when canceled: its result is ignored
			}
		}()
		return f
	}
	call := hedge.DecorateAsyncFunc(h, next)
	before := runtime.NumGoroutine()
	var callers sync.WaitGroup
	for g := range 8 {
		callers.Go(func() {
			for i := range 200 {
				ctx, cancel := context.WithCancel(context.Background())
				f := call(ctx, arg{n: g*1000 + i, mayHang: i%3 != 2})
				switch i % 3 {
				case 0:
					go f.Cancel()
				case 1:
					go cancel()
				}
				v, err := f.Await(context.Background())
				if err == nil {
					assert.Equal(t, g*1000+i, v)
				}
				cancel()
			}
		})
	}
	callers.Wait()
	// A hedge whose timer fired as a call was being canceled may still be calling next:
	// its context is canceled, and it ends on its own.
	contracttest.Eventually(t, func() bool { return open.Load() == 0 && running.Load() == 0 },
		"every attempt's context canceled and its goroutine returned")
	assert.LessOrEqual(t, ctxtest.SettleGoroutines(before), before)
	mu.Lock()
	defer mu.Unlock()
	assert.Len(t, attempts, 1600, "every call started")
	for n, k := range attempts {
		assert.LessOrEqual(t, k, 3, "call %d", n)
	}
}
