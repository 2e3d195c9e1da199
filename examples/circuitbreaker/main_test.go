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

// The example's output, on its manual clock: 4 failures in a window of 4 open the breaker
// (rate 100% ≥ 50%) as the 4th is recorded; the 5th call is refused with a rejection that
// matches ErrOpen and never reaches the service; after WaitInOpen (10s) the next call moves
// the breaker to half-open, and two successful trial calls close it with an empty window.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, `     0s "" payment service down (open: false)
     0s "" payment service down (open: false)
     0s "" payment service down (open: false)
     0s   breaker closed -> open
     0s "" payment service down (open: false)
     0s "" circuitbreaker: circuit breaker "Payments.Charge" is open and does not permit the call (open: true)
calls that reached the service: 4
    10s   breaker open -> half-open
    10s "charged 1250" <nil> (open: false)
    10s   breaker half-open -> closed
    10s "charged 1250" <nil> (open: false)
    10s "charged 1250" <nil> (open: false)
state closed, buffered calls 1, calls that reached the service: 7
`, out.String())
}
