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

// The limiter lets 4 attempts through in all: the first four calls pass at their first
// attempt; the last two are retried 3 times each, rejected each time, and answered by
// the fallback. The counter outside the retry saw 6 calls; the one inside it saw 4 + 2×3
// attempts.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, `a: results for a <nil>
b: results for b <nil>
c: results for c <nil>
d: results for d <nil>
e: no results <nil>
f: no results <nil>
calls 6, attempts 10
`, out.String())
}
