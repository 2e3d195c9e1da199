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

// The output is the same on every run: client and dependency share a manual clock. It
// shows the client kept under the dependency's quota (each attempt takes its own permit,
// SPEC CO-4), the 429 with Retry-After: 2 followed by a success after exactly 2s, the POST
// body sent twice, the last 503 returned as a response once the retries are spent, and
// the breaker opened by 500s failing fast (SPEC CO-2).
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, want, out.String())
}

const want = `25 requests in a burst, against a quota of 10 per second:
  all 200 OK, in 1.5s of clock time: the client's limiter spaced them out; 429s from the dependency: 0
the dependency is overloaded anyway, and answers 429 with Retry-After: 2:
  200 OK after 2s of clock time, in 2 requests
a POST meets a 503, without Retry-After (the retry waits its own 500ms):
  200 OK after 500ms; the dependency received the 25-byte body 2 times: [25 25]
the dependency stays busy, 503 every time:
  the retries are spent after 3 requests; the caller gets the last response: 503 Service Unavailable "busy, try later"
the dependency is down, 500 every time:
  requests 1-6: 500 Internal Server Error "database unreachable"; the breaker's window: 10 failures of 20 calls
  the breaker is open: the next request fails fast with circuitbreaker.ErrOpen, never reaching the dependency
`
