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

// SPEC AL-16: the example's output, on its manual clock: from 60, the limit comes down
// toward the dependency's capacity of 20 while the throughput rises, and climbs to its
// maximum, 200, once the dependency is fast.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, `the dependency takes 10ms up to 20 calls in flight, 10ms more per call above; 100 callers
slow calls    1- 509 in  3.24s:   157 calls/s, limit  49, most in flight  60, queued 51
slow calls  510-1009 in  2.86s:   175 calls/s, limit  36, most in flight  49, queued 64
slow calls 1010-1514 in  1.56s:   324 calls/s, limit  28, most in flight  36, queued 72
slow calls 1515-2014 in  1.05s:   476 calls/s, limit  25, most in flight  28, queued 75
the dependency is fast at any load
fast calls 2015-2572 in  160ms:  3488 calls/s, limit  95, most in flight  95, queued  5
fast calls 2573-3167 in   60ms:  9917 calls/s, limit 144, most in flight 100, queued  0
fast calls 3168-3667 in   50ms: 10000 calls/s, limit 183, most in flight 100, queued  0
fast calls 3668-4167 in   50ms: 10000 calls/s, limit 200, most in flight 100, queued  0
`, out.String())
}
