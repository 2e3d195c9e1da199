package circuitbreaker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	cb "github.com/resilience4go/resilience4go/policy/circuitbreaker"
)

// unavailable is RecordIf's predicate of these tests: a 503 status returned as a value.
func unavailable(status int, _ error) bool { return status == 503 }

// statusBreaker is a breaker on a manual clock with a window of 4 calls, all needed, that
// opens at 50% failures.
func statusBreaker(t *testing.T, opts ...cb.Option) *cb.Breaker {
	t.Helper()
	b, err := cb.New(append([]cb.Option{cb.WithClock(clock.NewManual()), cb.SlidingWindowSize(4),
		cb.MinimumCalls(4), cb.FailureRateThreshold(50)}, opts...)...)
	require.NoError(t, err)
	return b
}

func TestRecordIfCountsMatchingResultsAsFailures(t *testing.T) {
	b := statusBreaker(t, cb.RecordIf(unavailable))
	call := cb.DecorateFunc(b, func(_ context.Context, status int) (int, error) { return status, nil })
	for _, status := range []int{200, 503, 200} {
		v, err := call(context.Background(), status)
		require.NoError(t, err, "the breaker returns the result as is")
		require.Equal(t, status, v)
	}
	s := b.Snapshot()
	assert.Equal(t, 3, s.BufferedCalls)
	assert.Equal(t, 1, s.FailedCalls, "the 503 is a failure, the 200s successes")
	require.Equal(t, cb.Closed, b.State())

	_, err := call(context.Background(), 503) // 2 of 4: 50%
	require.NoError(t, err)
	require.Equal(t, cb.Open, b.State())
	_, err = call(context.Background(), 200)
	require.ErrorIs(t, err, cb.ErrOpen)
}

func TestIgnoreOnWinsOverRecordIf(t *testing.T) {
	b := statusBreaker(t, cb.IgnoreOn(errIgnored), cb.RecordIf(func(int, error) bool { return true }))
	call := cb.DecorateFunc(b, func(context.Context, struct{}) (int, error) { return 503, errIgnored })
	for range 4 {
		_, err := call(context.Background(), struct{}{})
		require.Same(t, errIgnored, err)
	}
	require.Equal(t, cb.Closed, b.State())
	assert.Equal(t, 0, b.Snapshot().BufferedCalls, "ignored outcomes count as nothing")
}

func TestRecordIfAsync(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   func(ctx context.Context, status int) *async.Future[int]
	}{
		{"completed futures", func(_ context.Context, status int) *async.Future[int] { return async.Completed(status) }},
		{"promises", func(_ context.Context, status int) *async.Future[int] {
			f, complete := async.NewPromise[int]()
			go complete(status, nil)
			return f
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := statusBreaker(t, cb.RecordIf(unavailable))
			call := cb.DecorateAsyncFunc(b, tc.fn)
			for _, status := range []int{200, 503, 200, 503} {
				v, err := call(context.Background(), status).Await(context.Background())
				require.NoError(t, err)
				require.Equal(t, status, v)
			}
			require.Eventually(t, func() bool { return b.State() == cb.Open }, 5*time.Second, time.Millisecond,
				"two 503s of four calls open the breaker")
			_, err := call(context.Background(), 200).Await(context.Background())
			require.ErrorIs(t, err, cb.ErrOpen)
		})
	}

	t.Run("IgnoreOn wins", func(t *testing.T) {
		b := statusBreaker(t, cb.IgnoreOn(errIgnored), cb.RecordIf(func(int, error) bool { return true }))
		call := cb.DecorateAsyncFunc(b, func(context.Context, struct{}) *async.Future[int] {
			f, complete := async.NewPromise[int]()
			complete(503, errIgnored)
			return f
		})
		for range 4 {
			_, err := call(context.Background(), struct{}{}).Await(context.Background())
			require.Same(t, errIgnored, err)
		}
		require.Equal(t, cb.Closed, b.State())
		assert.Equal(t, 0, b.Snapshot().BufferedCalls)
	})
}

// A RecordIf predicate that panics on the half-open trial records the trial as a failure:
// the panic goes on, and the breaker opens again instead of staying half-open for ever,
// sync and async.
func TestRecordIfPanicDoesNotLeaveTheTrialTaken(t *testing.T) {
	for _, async_ := range []bool{false, true} {
		clk := clock.NewManual()
		pred := func(v int, _ error) bool {
			if v == 42 {
				panic("predicate")
			}
			return v == 503
		}
		b, err := cb.New(cb.WithClock(clk), cb.SlidingWindowSize(2), cb.MinimumCalls(2),
			cb.PermittedInHalfOpen(1), cb.WaitInOpen(time.Second), cb.RecordIf(pred))
		require.NoError(t, err)
		sync := cb.DecorateFunc(b, func(_ context.Context, v int) (int, error) { return v, nil })
		asyncCall := cb.DecorateAsyncFunc(b, func(_ context.Context, v int) *async.Future[int] {
			f, complete := async.NewPromise[int]()
			defer complete(v, nil)
			return f
		})
		call := func(v int) {
			if async_ {
				_, _ = asyncCall(context.Background(), v).Await(context.Background())
				return
			}
			_, _ = sync(context.Background(), v)
		}
		call(503)
		call(503)
		require.Equal(t, cb.Open, b.State())
		clk.Advance(2 * time.Second)
		assert.Panics(t, func() { call(42) }, "async %v", async_)
		assert.Equal(t, cb.Open, b.State(), "the trial failed: open again, async %v", async_)
		clk.Advance(2 * time.Second)
		call(200)
		assert.Equal(t, cb.Closed, b.State(), "a later trial closes it, async %v", async_)
	}
}

// An async call whose future is already complete when next returns, and whose RecordIf
// predicate panics, is recorded once, as a failure, as the sync call is (fault: the
// async path recorded it twice, and in half-open gave a trial back twice).
func TestRecordIfPanicOnACompletedFutureIsRecordedOnce(t *testing.T) {
	panicky := func(int, error) bool { panic("predicate") }
	for _, async_ := range []bool{false, true} {
		obs := &contracttest.Observer{}
		b, err := cb.New(cb.WithClock(clock.NewManual()), cb.Name("b"), cb.Observe(obs),
			cb.SlidingWindowSize(10), cb.MinimumCalls(10), cb.RecordIf(panicky))
		require.NoError(t, err)
		assert.Panics(t, func() {
			if async_ {
				cb.DecorateAsyncFunc(b, func(context.Context, int) *async.Future[int] { return async.Completed(1) })(context.Background(), 0)
				return
			}
			_, _ = cb.DecorateFunc(b, func(context.Context, int) (int, error) { return 1, nil })(context.Background(), 0)
		})
		s := b.Snapshot()
		assert.Equal(t, 1, s.BufferedCalls, "async %v", async_)
		assert.Equal(t, 1, s.FailedCalls, "async %v", async_)
		assert.Len(t, obs.Of(cb.Layer, "b").Outcomes(), 1, "async %v", async_)
	}

	// Half-open with 3 trials: the panicking trial counts as one of them, so the breaker
	// decides only after the third.
	clk := clock.NewManual()
	pred := func(v int, _ error) bool {
		if v == 42 {
			panic("predicate")
		}
		return v == 503
	}
	b, err := cb.New(cb.WithClock(clk), cb.SlidingWindowSize(1), cb.MinimumCalls(1),
		cb.PermittedInHalfOpen(3), cb.WaitInOpen(time.Second), cb.RecordIf(pred))
	require.NoError(t, err)
	asyncCall := cb.DecorateAsyncFunc(b, func(_ context.Context, v int) *async.Future[int] { return async.Completed(v) })
	syncCall := cb.DecorateFunc(b, func(_ context.Context, v int) (int, error) { return v, nil })
	_, _ = syncCall(context.Background(), 503)
	require.Equal(t, cb.Open, b.State())
	clk.Advance(time.Second)
	assert.Panics(t, func() { asyncCall(context.Background(), 42) })
	_, _ = syncCall(context.Background(), 200)
	assert.Equal(t, cb.HalfOpen, b.State(), "two trials of three: not decided yet")
	_, _ = syncCall(context.Background(), 200)
	assert.NotEqual(t, cb.HalfOpen, b.State(), "decided after the third trial")
}
