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

// The example's output: a success passes as it is, with no event; a failure is replaced
// by the fallback function's result after a FallbackApplied event carrying the original
// error; an error in IgnoreOn passes through untouched, with no event.
// The policy's page on the site shows output.txt as the example's output.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	want, err := os.ReadFile("output.txt")
	require.NoError(t, err)
	assert.Equal(t, string(want), out.String())
}
