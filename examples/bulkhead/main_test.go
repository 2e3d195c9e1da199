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

// The example's output, on its manual clock: two calls start at once; the third queues
// and is handed the slot the first gives back, at 300ms, after an EventWaited of 300ms;
// the fourth, still queued when its MaxWait of 500ms passes, fails with a rejection that
// matches ErrFull, after an EventRejected.
// The policy's page on the site shows output.txt as the example's output.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	want, err := os.ReadFile("output.txt")
	require.NoError(t, err)
	assert.Equal(t, string(want), out.String())
}
