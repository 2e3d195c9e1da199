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

// SPEC AS-1, AS-2, AS-3, CL-3: the points the example makes.
func TestScheduledCanceledRejected(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	s := out.String()
	assert.Contains(t, s, "     0s #8 failed: ratelimit: rate limit exceeded", "600ms > maxWait: a failed future at once")
	assert.Contains(t, s, "   50ms   clock tasks pending: 2\n", "two calls scheduled on the clock")
	assert.Contains(t, s, "   50ms #7 Cancel() = true\n", "canceled before it started")
	assert.NotContains(t, s, "\"address 7\": request sent", "a canceled call never starts")
	assert.Contains(t, s, "RateLimiterWaited geocoding-async at=50ms wait=350ms", "#9 gets the canceled slot, at 400ms")
	assert.Contains(t, s, "  400ms #9 Cancel() = false\n", "a started call keeps its permit")
	assert.Contains(t, s, "RateLimiterWaited geocoding-async at=400ms wait=200ms", "so #10 waits for the next slot")
	assert.Contains(t, s, "   1.4s   clock tasks pending: 0\n")
}

const want = `-- 8 calls at once: limiter 5 per 1s, maxWait 500ms
     0s #1 geocode("address 1")
     0s   "address 1": request sent
     0s #2 geocode("address 2")
     0s   "address 2": request sent
     0s #3 geocode("address 3")
     0s   "address 3": request sent
     0s #4 geocode("address 4")
     0s   "address 4": request sent
     0s #5 geocode("address 5")
     0s   "address 5": request sent
     0s #6 geocode("address 6")
     0s   event RateLimiterWaited geocoding-async at=0s wait=200ms
     0s #7 geocode("address 7")
     0s   event RateLimiterWaited geocoding-async at=0s wait=400ms
     0s #8 geocode("address 8")
     0s   event RateLimiterRejected geocoding-async at=0s retry-after=600ms err=ratelimit: rate limit exceeded for "geocoding-async"
     0s #8 failed: ratelimit: rate limit exceeded for "geocoding-async"
     0s   clock tasks pending: 7
-- the answers of the first 5 arrive
   50ms #1 done: coordinates of address 1
   50ms #2 done: coordinates of address 2
   50ms #3 done: coordinates of address 3
   50ms #4 done: coordinates of address 4
   50ms #5 done: coordinates of address 5
   50ms   clock tasks pending: 2
-- cancel #7 while it waits for its permit: it never starts, its permit comes back
   50ms #7 failed: async: future canceled
   50ms #7 Cancel() = true
   50ms   clock tasks pending: 1
-- the next call takes the canceled slot, at 400ms
   50ms #9 geocode("address 9")
   50ms   event RateLimiterWaited geocoding-async at=50ms wait=350ms
   50ms   clock tasks pending: 2
-- #9 starts at its turn; cancelling it then does not give its permit back
  200ms   "address 6": request sent
  250ms #6 done: coordinates of address 6
  400ms   "address 9": request sent
  400ms #9 failed: async: future canceled
  400ms #9 Cancel() = false
-- so the next call waits for the following slot, at 600ms
  400ms #10 geocode("address 10")
  400ms   event RateLimiterWaited geocoding-async at=400ms wait=200ms
-- the rest
  600ms   "address 10": request sent
  650ms #10 done: coordinates of address 10
   1.4s   clock tasks pending: 0
`
