package main

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// SPEC RL-3, RL-6, RL-7, RL-9b: the example's output, on its manual clock: a burst of 5 passes,
// the 6th call is refused at once with a retry-after of one emission interval (200ms)
// because its permit is beyond MaxWait, and waits for it once it is within MaxWait; on its
// own, a refused Reserve's Delay is the retry-after, after which a permit is free; per
// client, one client's spent quota leaves another's untouched.
// The policy's page on the site shows output.txt as the example's output.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	want, err := os.ReadFile("output.txt")
	require.NoError(t, err)
	assert.Equal(t, string(want), out.String())
}
