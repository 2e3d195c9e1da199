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

// The output is the same on every run: the example runs on a manual clock.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, want, out.String())
}

// SPEC RG-3, CO-2: the handle follows the pipeline's limiter; an unknown id is
// R4C-REG-009; the snapshot lists every instance, sorted by id; the open breaker's
// rejection spends no permit.
func TestHandlesAndSnapshot(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	s := out.String()
	assert.Contains(t, s, "12 calls: 10 passed, 2 rejected with ratelimit.ErrExceeded\n")
	assert.Contains(t, s, "300ms later: 3 permits available\n")
	assert.Contains(t, s, `reg.RateLimiter("serach"): R4C-REG-009`)
	assert.Contains(t, s, "took none: 1 of 5 permits left\n")
	assert.Contains(t, s, "  rate limiter    reviews   1 of  5 permits available\n  rate limiter    search    2 of 10 permits available\n")
}

const want = `limiter "search": 10 permits available
call  1: results for resilience 1; 9 permits left
call 10: results for resilience 10; 0 permits left
12 calls: 10 passed, 2 rejected with ratelimit.ErrExceeded
300ms later: 3 permits available
ExecuteAsync: results for async, <nil>; 2 permits available
reviews call 1: reviews: 503 Service Unavailable
reviews call 2: reviews: 503 Service Unavailable
reviews call 3: reviews: 503 Service Unavailable
reviews call 4: reviews: 503 Service Unavailable
reviews call 5: circuitbreaker: circuit breaker "reviews" is open and does not permit the call
calls 1-4 took a permit each; call 5, rejected by the open breaker, took none: 1 of 5 permits left
breaker "reviews": open
reg.RateLimiter("serach"): R4C-REG-009: rateLimiter = "serach": no instance with this id: it exists once a function using it is wrapped or its pipeline built
snapshot:
  rate limiter    reviews   1 of  5 permits available
  rate limiter    search    2 of 10 permits available
  bulkhead        reviews  8 of 8 slots available, 0 waiting
  circuit breaker reviews  open, failure rate 100% (4 of 4 calls), calls not permitted: 1
`
