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

// A directive on an interface gives each method its own instance: Forward spends its 2
// permits and is refused, and Reverse still has its own 2. With name=, Route and Matrix
// share one limiter: the third call of the two together is refused.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, `Geocoder (permits=2 period=1s, an instance per method):
  Forward 1: passed
  Forward 2: passed
  Forward 3: refused
  Reverse 1: passed
  Reverse 2: passed
Router (name=routing permits=2 period=1s, one instance):
  Route 1: passed
  Matrix 1: passed
  Route 2: refused
rate limiters: Geocoder.Forward Geocoder.Reverse routing
`, out.String())
}
