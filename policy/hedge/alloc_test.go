package hedge_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

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
