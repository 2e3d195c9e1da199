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

// SPEC RL-3, RL-4, RL-6, CL-1: the seed's ManualClock test. Ten calls pass, the eleventh
// is rejected; 100ms later one more passes, and the next is rejected again.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, `true ratelimit: rate limit exceeded for "SearchAPI.Search"
results for next <nil>
true ratelimit: rate limit exceeded for "SearchAPI.Search"
`, out.String())
}
