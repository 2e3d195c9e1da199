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

// SPEC CO-9: the example's output, on its manual clock: a call that fails twice succeeds
// on its third attempt, 100ms and 200ms later (EventAttempt before each wait); an error in
// AbortOn is returned at once, as is (EventAborted); a call that keeps failing returns its
// last error after 3 attempts (EventExhausted); and with WaitForPermit the retry of a
// rejection by its own limiter waits the limiter's retry-after (1s), not its 100ms delay,
// and its second attempt passes.
// The policy's page on the site shows output.txt as the example's output.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	want, err := os.ReadFile("output.txt")
	require.NoError(t, err)
	assert.Equal(t, string(want), out.String())
}
