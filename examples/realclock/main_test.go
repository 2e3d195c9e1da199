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

// On the real clock, every call gets 200: the limiter keeps the client under the API's
// quota, and the calls above the burst wait for their turn (one every 100ms) rather than
// fail. 20 calls with a burst of 9 take at least 11 × 100ms.
func TestEveryCallWithinTheQuota(t *testing.T) {
	var out bytes.Buffer
	start := time.Now()
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, "20 calls: 20 × 200, 0 × 429\n", out.String())
	assert.GreaterOrEqual(t, time.Since(start), 1000*time.Millisecond, "the calls above the burst did not wait")
}
