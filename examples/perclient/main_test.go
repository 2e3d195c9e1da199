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

// Each API key has its own quota, over HTTP and over gRPC: the 4th request of one key
// within a minute is refused with the time to its next permit, while another key, and a
// request without a key (keyed by its client IP), pass. The output is the same on every
// run: the clock is a manual one.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, `HTTP: 3 requests per minute per API key
  alice, request 1: 200 OK
  alice, request 2: 200 OK
  alice, request 3: 200 OK
  alice, request 4: 429 Too Many Requests, Retry-After: 20
  bob, request 1: 200 OK (another key, another quota)
  no key, request 1: 200 OK (keyed by client IP)
  alice, /healthz: 200 OK (exempt)
  alice, 20s later: 200 OK (one permit every 20s)
gRPC: 3 calls per minute per x-api-key
  alice, call 1: OK
  alice, call 2: OK
  alice, call 3: OK
  alice, call 4: ResourceExhausted, retry in 20s
  bob, call 1: OK
`, out.String())
}
