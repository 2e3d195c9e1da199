package retry_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/retry"
)

// unavailable is RetryIf's predicate of these tests: a 503 status returned as a value.
func unavailable(status int, _ error) bool { return status == 503 }

// statuses returns the statuses of a function that answers 503 to its first n503 calls and
// 200 afterwards, each with a nil error.
type statuses struct {
	n503  int
	calls int
}

func (s *statuses) next() int {
	s.calls++
	if s.calls <= s.n503 {
		return 503
	}
	return 200
}

func (s *statuses) call(context.Context, struct{}) (int, error) { return s.next(), nil }

func (s *statuses) completed(context.Context, struct{}) *async.Future[int] {
	return async.Completed(s.next())
}

// promised answers with a future completed later, on the retry's clock.
func (s *statuses) promised(clk *clock.Manual) func(context.Context, struct{}) *async.Future[int] {
	return func(context.Context, struct{}) *async.Future[int] {
		f, complete := async.NewPromise[int]()
		v := s.next()
		clk.AfterFunc(10*time.Millisecond, func() { complete(v, nil) })
		return f
	}
}

// driveAsync advances clk until f completes, and returns its outcome.
func driveAsync(t *testing.T, clk *clock.Manual, f *async.Future[int]) (int, error) {
	t.Helper()
	for range 1000 {
		if v, done, err := f.Result(); done {
			return v, err
		}
		clk.Advance(10 * time.Millisecond)
	}
	t.Fatal("the future never completes")
	return 0, nil
}

func TestRetryIfRetriesAResultUntilItSucceeds(t *testing.T) {
	clk := clock.NewManual()
	ev := &events{}
	r := newRetry(t, retry.WithClock(clk), retry.MaxAttempts(4), retry.If(unavailable), retry.OnEvent(ev.listen))
	s := &statuses{n503: 3}
	v, err := retry.DecorateFunc(r, s.call)(context.Background(), struct{}{})
	require.NoError(t, err)
	assert.Equal(t, 200, v)
	assert.Equal(t, 4, s.calls)
	assert.Equal(t, 1500*time.Millisecond, clk.Now(), "three waits of the default delay")
	got := ev.get()
	require.Len(t, got, 3)
	for i, e := range got {
		assert.Equal(t, retry.EventAttempt, e.Kind)
		assert.Equal(t, i+1, e.Attempt)
		assert.NoError(t, e.Err, "the outcome retried had no error")
	}
}

func TestRetryIfReturnsTheLastResultAsIsWhenAttemptsRunOut(t *testing.T) {
	clk := clock.NewManual()
	ev := &events{}
	r := newRetry(t, retry.WithClock(clk), retry.MaxAttempts(3), retry.If(unavailable), retry.OnEvent(ev.listen))
	s := &statuses{n503: 3}
	v, err := retry.DecorateFunc(r, s.call)(context.Background(), struct{}{})
	require.NoError(t, err, "the third 503 is returned with its nil error")
	assert.Equal(t, 503, v)
	assert.Equal(t, 3, s.calls)
	for _, e := range ev.get() {
		assert.Equal(t, retry.EventAttempt, e.Kind, "no RetryExhausted without an error")
	}
}

func TestAbortOnWinsOverRetryIf(t *testing.T) {
	clk := clock.NewManual()
	r := newRetry(t, retry.WithClock(clk), retry.AbortOn(errBoom),
		retry.If(func(int, error) bool { return true }))
	calls := 0
	_, err := retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) {
		calls++
		return 0, errBoom
	})(context.Background(), struct{}{})
	require.Same(t, errBoom, err)
	assert.Equal(t, 1, calls)
	assert.Equal(t, time.Duration(0), clk.Now())

	// Errors outside AbortOn are retried by the predicate's verdict as well as the lists'.
	calls = 0
	_, err = retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) {
		calls++
		return 0, errOther
	})(context.Background(), struct{}{})
	require.Same(t, errOther, err)
	assert.Equal(t, 3, calls)
}

func TestRetryIfAsync(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   func(*statuses, *clock.Manual) func(context.Context, struct{}) *async.Future[int]
	}{
		{"completed futures", func(s *statuses, _ *clock.Manual) func(context.Context, struct{}) *async.Future[int] {
			return s.completed
		}},
		{"promises", func(s *statuses, clk *clock.Manual) func(context.Context, struct{}) *async.Future[int] {
			return s.promised(clk)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Run("succeeds on the fourth attempt", func(t *testing.T) {
				clk := clock.NewManual()
				r := newRetry(t, retry.WithClock(clk), retry.MaxAttempts(4), retry.If(unavailable))
				s := &statuses{n503: 3}
				v, err := driveAsync(t, clk, retry.DecorateAsyncFunc(r, tc.fn(s, clk))(context.Background(), struct{}{}))
				require.NoError(t, err)
				assert.Equal(t, 200, v)
				assert.Equal(t, 4, s.calls)
			})
			t.Run("the third 503 is returned as is", func(t *testing.T) {
				clk := clock.NewManual()
				r := newRetry(t, retry.WithClock(clk), retry.MaxAttempts(3), retry.If(unavailable))
				s := &statuses{n503: 3}
				v, err := driveAsync(t, clk, retry.DecorateAsyncFunc(r, tc.fn(s, clk))(context.Background(), struct{}{}))
				require.NoError(t, err)
				assert.Equal(t, 503, v)
				assert.Equal(t, 3, s.calls)
			})
		})
	}

	t.Run("AbortOn wins", func(t *testing.T) {
		clk := clock.NewManual()
		r := newRetry(t, retry.WithClock(clk), retry.AbortOn(errBoom),
			retry.If(func(int, error) bool { return true }))
		calls := 0
		f := retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] {
			calls++
			return async.Failed[int](errBoom)
		})(context.Background(), struct{}{})
		_, err := driveAsync(t, clk, f)
		require.Same(t, errBoom, err)
		assert.Equal(t, 1, calls)

		calls = 0
		f = retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] {
			calls++
			p, complete := async.NewPromise[int]()
			clk.AfterFunc(time.Millisecond, func() { complete(0, errBoom) })
			return p
		})(context.Background(), struct{}{})
		_, err = driveAsync(t, clk, f)
		require.Same(t, errBoom, err)
		assert.Equal(t, 1, calls)
	})
}

func TestErrorListsAppend(t *testing.T) {
	clk := clock.NewManual()
	r := newRetry(t, retry.WithClock(clk), retry.On(errBoom), retry.On(errOther))
	assert.Equal(t, []error{errBoom, errOther}, r.Config().RetryOn, "each call adds to the list")
	assert.True(t, r.Retryable(errBoom), "the first call's errors are still retried")
	assert.True(t, r.Retryable(errOther))
	assert.False(t, r.Retryable(errUnlisted))

	r = newRetry(t, retry.WithClock(clk), retry.AbortOn(errBoom), retry.AbortOn(errOther, nil))
	assert.Equal(t, []error{errBoom, errOther}, r.Config().AbortOn, "each call adds to the list, nil skipped")
	assert.False(t, r.Retryable(errBoom))
	assert.False(t, r.Retryable(errOther))
	assert.True(t, r.Retryable(errUnlisted))
}

var errUnlisted = errorString("unlisted")

type errorString string

func (e errorString) Error() string { return string(e) }
