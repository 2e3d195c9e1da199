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

// The example's output: a success passes as it is, with no event; a failure is replaced
// by the fallback function's result after a FallbackApplied event carrying the original
// error; an error in IgnoreOn passes through untouched, with no event.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, `pen: 120 <nil>
  event FallbackApplied Pricing.Price at=0s err=pricing service unavailable
ink: 95 <nil>
kite: 0 no such product
`, out.String())
}
