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

// The default order puts the breaker and the retry outside the limiter: its rejections
// open a breaker that does not ignore them (2 of 4 calls, 50%), and a retry that does not
// abort on them spends its attempts and delays (2 × 100ms) on them. With IgnoreOn and
// AbortOn, the breaker stays closed and the call fails at once.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, `Search.Opens, 5 calls: ok, ok, rate limited, rate limited, breaker open; the breaker is open
Search.Stays, 5 calls: ok, ok, rate limited, rate limited, rate limited; the breaker is closed
Search.Retries, a call over the quota: rate limited after 200ms
Search.Aborts, a call over the quota: rate limited after 0s
`, out.String())
}
