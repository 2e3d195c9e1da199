package resilience_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// goChan is the plain Go way to run fn on a goroutine and wait for its result: a
// goroutine and a buffered channel carrying (T, error), awaited with a select on the
// channel and on ctx.
func goChan[T any](ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := fn(ctx)
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// SPEC AS-6: a call admitted at once through WrapAsync with a rate limiter, whose function
// runs on a goroutine through async.Go, and awaited with a context that never ends,
// allocates what async.Go does (two allocations), no more than a goroutine and a buffered
// channel awaited with a select, measured here on the spot. The composition adds nothing.
func TestWrapAsync_AS6_AllocsNoMoreThanGoroutineAndChannel(t *testing.T) {
	reg, err := resilience.NewRegistry()
	require.NoError(t, err)
	ctx := context.Background()
	fn := func(context.Context) (int, error) { return 1, nil }
	call, err := resilience.WrapAsync(reg, "F.Async",
		func(ctx context.Context) *async.Future[int] { return async.Go(ctx, fn) },
		resilience.RateLimiter(ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second)))
	require.NoError(t, err)

	peer := testing.AllocsPerRun(1000, func() {
		if _, err := goChan(ctx, fn); err != nil {
			t.Fatal(err)
		}
	})
	ours := testing.AllocsPerRun(1000, func() {
		if _, err := call(ctx).Await(ctx); err != nil {
			t.Fatal(err)
		}
	})
	assert.Equal(t, 2.0, ours)
	assert.LessOrEqual(t, ours, peer, "a goroutine and a channel cost %v", peer)

	completed := async.Completed(1)
	done, err := resilience.WrapAsync(reg, "F.Done",
		func(context.Context) *async.Future[int] { return completed },
		resilience.RateLimiter(ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second)))
	require.NoError(t, err)
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		if _, err := done(ctx).Await(ctx); err != nil {
			t.Fatal(err)
		}
	}), "the composition allocates nothing of its own")
}

// With an observer, a call whose future is already complete when the composition returns
// it is recorded at once, with no callback: it allocates nothing either.
func TestWrapAsync_ObservedCompletedFutureAllocatesNothing(t *testing.T) {
	reg, err := resilience.NewRegistry(resilience.WithObserver(contracttest.NopObserver{}))
	require.NoError(t, err)
	ctx := context.Background()
	completed := async.Completed(1)
	done, err := resilience.WrapAsync(reg, "F.Observed",
		func(context.Context) *async.Future[int] { return completed },
		resilience.RateLimiter(ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second)))
	require.NoError(t, err)
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		if _, err := done(ctx).Await(ctx); err != nil {
			t.Fatal(err)
		}
	}))
}
