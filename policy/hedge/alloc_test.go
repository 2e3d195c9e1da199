package hedge_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/policy/hedge"
)

// SPEC HG-2, HG-17: a call whose attempt 1 succeeds at once allocates attempt 1's context
// (one object) and nothing else, with or without the budget.
func TestHG17_FirstAttemptWinsAllocatesOnlyItsContext(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	for _, opts := range [][]hedge.Option{nil, {hedge.Budget(false)}} {
		h, err := hedge.New(opts...)
		assert.NoError(t, err)
		call := hedge.DecorateAsyncFunc(h, answer)
		ctx := context.Background()
		allocs := testing.AllocsPerRun(1000, func() {
			if _, _, err := call(ctx, 1).Result(); err != nil {
				t.Fatal(err)
			}
		})
		assert.LessOrEqual(t, allocs, 1.0)
	}
	// A disabled hedge adds nothing.
	h, err := hedge.New(hedge.Enabled(false))
	assert.NoError(t, err)
	call := hedge.DecorateAsyncFunc(h, answer)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { call(context.Background(), 1) }))
}

// SPEC HG-17: a call hedged around async.Go whose attempt 1 answers before the delay
// allocates at most 8 objects: the call's state (its future held in it), its timer and the
// timer's function, attempt 1's context, the context it gives async.Go for fn, attempt
// 1's completion callback, and async.Go's own two.
func TestHG17_HedgedGoroutineAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	h, err := hedge.New(hedge.Delay(time.Hour))
	assert.NoError(t, err)
	call := hedge.DecorateAsyncFunc(h, func(ctx context.Context, _ int) *async.Future[int] {
		return async.Go(ctx, func(context.Context) (int, error) { return 1, nil }) // allocates nothing of its own
	})
	ctx := context.Background()
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := call(ctx, 1).Await(ctx); err != nil {
			t.Fatal(err)
		}
	})
	assert.LessOrEqual(t, allocs, 8.0)
}
