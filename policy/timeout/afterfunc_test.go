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
	"github.com/resilience4go/resilience4go/clock"
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

// SPEC AS-2: deadlines whose timers fire as they are armed, before the function runs,
// leave nothing registered on the caller's context, sync and async, and whether the
// function's future completes, is never completed, or is nil.
func TestAS2_CallContextRemovedWhenTimerFiresAtOnce(t *testing.T) {
	to, err := timeout.New(time.Second, timeout.WithClock(ctxtest.EagerClock{Manual: clock.NewManual()}))
	require.NoError(t, err)
	shared := ctxtest.NewOwnDone()
	defer shared.Cancel()
	before := runtime.NumGoroutine()

	for _, next := range []func(context.Context, int) *async.Future[int]{
		func(context.Context, int) *async.Future[int] { return async.Completed(1) },
		func(context.Context, int) *async.Future[int] { f, _ := async.NewPromise[int](); return f },
		func(context.Context, int) *async.Future[int] { return nil },
	} {
		_, err := await(t, timeout.DecorateAsyncFunc(to, next)(shared, 0))
		require.ErrorIs(t, err, timeout.ErrTimeout)
	}
	_, err = timeout.DecorateFunc(to, func(ctx context.Context, _ int) (int, error) {
		return 0, ctx.Err()
	})(shared, 0)
	require.ErrorIs(t, err, timeout.ErrTimeout)

	assert.LessOrEqual(t, ctxtest.SettleGoroutines(before), before, "nothing left registered on the context")
}

// await waits for a future completed on another goroutine (a timer's).
func await[T any](t *testing.T, f *async.Future[T]) (T, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := f.Await(ctx)
	require.NoError(t, ctx.Err(), "the future completes")
	return v, err
}
