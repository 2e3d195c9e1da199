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

// The example's output, on its manual clock: a call that answers within its 2s is
// returned as is; a call that would take 5s has its context ended at 2s, stops there, and
// fails with the timeout's error, which matches ErrTimeout and context.DeadlineExceeded,
// after an EventExceeded event whose attribute "timeout" is 2s.
// The policy's page on the site shows output.txt as the example's output.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	want, err := os.ReadFile("output.txt")
	require.NoError(t, err)
	assert.Equal(t, string(want), out.String())
}
