package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The whole example, on the real clock (about 2.5s): both servers accept every request,
// because each client keeps under their quota, and each client's 20 requests take at
// least the 11 emission intervals after its burst of 9.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	rep, err := run(context.Background(), &out)
	require.NoError(t, err)
	assert.Equal(t, `HTTP: 20 requests from 4 goroutines, client limiter 9 per 900ms, maxWait 5s
  the server answered 20 × 200 OK, 0 × 429 Too Many Requests
gRPC: 20 calls from 4 goroutines, client limiter 9 per 900ms, maxWait 5s
  the server answered 20 × OK, 0 × ResourceExhausted
`, out.String())
	const atLeast = (requests-9)*100*time.Millisecond - 25*time.Millisecond
	assert.GreaterOrEqual(t, rep.HTTPTook, atLeast, "the HTTP client waited for its permits")
	assert.GreaterOrEqual(t, rep.GRPCTook, atLeast, "the gRPC client waited for its permits")
}
