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

// SPEC CO-9: the example's output, on its manual clock: a call that fails twice succeeds
// on its third attempt, 100ms and 200ms later (EventAttempt before each wait); an error in
// AbortOn is returned at once, as is (EventAborted); a call that keeps failing returns its
// last error after 3 attempts (EventExhausted); and with WaitForPermit the retry of a
// rejection by its own limiter waits the limiter's retry-after (1s), not its 100ms delay,
// and its second attempt passes.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, `     0s   event RetryAttempt Inventory.Stock at=0s attempt=1 wait=100ms err=service unavailable
  100ms   event RetryAttempt Inventory.Stock at=100ms attempt=2 wait=200ms err=service unavailable
  300ms pen: 7, <nil> (after 300ms; not found: false)
  300ms   event RetryAborted Inventory.Stock at=300ms attempt=1 err=no such item
  300ms ink: 0, no such item (after 0s; not found: true)
  300ms   event RetryAttempt Inventory.Stock at=300ms attempt=1 wait=100ms err=service unavailable
  400ms   event RetryAttempt Inventory.Stock at=400ms attempt=2 wait=200ms err=service unavailable
  600ms   event RetryExhausted Inventory.Stock at=600ms attempt=3 err=service unavailable
  600ms lamp: 0, service unavailable (after 300ms; not found: false)
-- a retry in front of a limiter of 1 call per second
  600ms "report" <nil> (after 0s)
  600ms   event RateLimiterRejected Reports.Get at=600ms retry-after=1s err=ratelimit: rate limit exceeded for "Reports.Get"
  600ms   event RetryAttempt Reports.Get at=600ms attempt=1 wait=1s err=ratelimit: rate limit exceeded for "Reports.Get"
   1.6s "report" <nil> (after 1s)
`, out.String())
}
