package timeout_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/policy/timeout"
)

// SPEC AS-2, AS-3: whichever way a call ends (in time, at its deadline, canceled; sync
// and async, on a manual clock), the call's context is no longer registered on the
// caller's.
func TestAS3_CallContextRemovedOnEveryOutcome(t *testing.T) {
	to, clk, _ := newManual(t, time.Second)
	shared := ctxtest.NewOwnDone()
	defer shared.Cancel()
	before := runtime.NumGoroutine()

	var inTime, late, canceled innerCall
	inTimeFut := timeout.DecorateAsyncFunc(to, inTime.next(false))(shared, "q")
	lateFut := timeout.DecorateAsyncFunc(to, late.next(false))(shared, "q")
	canceledFut := timeout.DecorateAsyncFunc(to, canceled.next(true))(shared, "q")
	inTime.complete("ok", nil)
	v, err := requireDone(t, inTimeFut)
	require.NoError(t, err)
	assert.Equal(t, "ok", v)
	assert.True(t, canceledFut.Cancel())

	syncInTime := timeout.DecorateFunc(to, func(context.Context, string) (string, error) { return "ok", nil })
	_, err = syncInTime(shared, "q")
	require.NoError(t, err)
	syncLate := timeout.DecorateFunc(to, func(ctx context.Context, _ string) (string, error) {
		clk.Advance(time.Second) // the deadline passes during the call
		return "late", ctx.Err()
	})
	_, err = syncLate(shared, "q")
	require.ErrorIs(t, err, timeout.ErrTimeout)
	_, err = requireDone(t, lateFut) // its deadline passed with syncLate's
	require.ErrorIs(t, err, timeout.ErrTimeout)

	assert.LessOrEqual(t, ctxtest.SettleGoroutines(before), before, "nothing left registered on the context")
	assert.Zero(t, clk.PendingTasks())
}

// SPEC AS-2: on the system clock, calls whose deadline and completion race leave nothing
// registered on the long-lived context they share.
func TestAS2_CallContextRemovedSystemClock(t *testing.T) {
	to, err := timeout.New(20 * time.Microsecond)
	require.NoError(t, err)
	var pending sync.WaitGroup
	asyncCall := timeout.DecorateAsyncFunc(to, func(_ context.Context, i int) *async.Future[int] {
		if i%3 == 0 {
			return async.Completed(i)
		}
		f, complete := async.NewPromise[int]()
		pending.Add(1)
		time.AfterFunc(time.Duration(i%40)*time.Microsecond, func() { complete(i, nil); pending.Done() })
		return f
	})
	syncCall := timeout.DecorateFunc(to, func(_ context.Context, i int) (int, error) { return i, nil })
	ctx := ctxtest.NewOwnDone()
	defer ctx.Cancel()
	before := runtime.NumGoroutine()

	futures := make([]*async.Future[int], 0, 1000)
	for i := range 20_000 {
		if i%10 == 0 {
			_, _ = syncCall(ctx, i)
		}
		futures = append(futures, asyncCall(ctx, i))
		if len(futures) == cap(futures) {
			for _, f := range futures {
				_, _ = f.Await(context.Background())
			}
			futures = futures[:0]
		}
	}
	pending.Wait()
	assert.LessOrEqual(t, ctxtest.SettleGoroutines(before), before, "nothing left registered on the context")
}
