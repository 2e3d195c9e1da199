package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// SPEC HG-4, HG-7, HG-11: the example's output, on its manual clock: no hedge for a fast
// answer; a hedge after 200ms that wins, its loser canceled and its bulkhead slot free; an
// immediate hedge on errOverloaded; 8 of 20 hedges allowed by the budget (max(10% of 23
// calls, 1/s × 10s) = 10, of which the first two calls used 2), 12 skipped.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, `-- a fast replica: no hedge
   30ms   result after 30ms: "book: 42.00 (attempt 1)" <nil>, free bulkhead slots 50
-- a slow replica (3s): a hedge at 200ms answers in 30ms
  230ms   event Hedged PriceService.Price at=230ms attempt=2 wait=200ms
  260ms   event HedgeWon PriceService.Price at=260ms attempt=2
  260ms   pen: attempt 1 canceled
  260ms   result after 230ms: "pen: 42.00 (attempt 2)" <nil>, free bulkhead slots 50
-- an overloaded replica: hedged at once
  270ms   event Hedged PriceService.Price at=270ms attempt=2 wait=10ms err=replica overloaded
  300ms   event HedgeWon PriceService.Price at=300ms attempt=2
  300ms   result after 40ms: "ink: 42.00 (attempt 2)" <nil>, free bulkhead slots 50
-- 20 slow calls at once: the budget allows few hedges
   1.3s   20 of 20 answered; 8 hedges started, 12 skipped; the budget's window holds 23 calls and 10 hedges
`, out.String())
}
