// Package exampletest holds what the tests of the example programs share.
package exampletest

import (
	"bytes"
	"context"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// MatchesOutputFile runs an example's run function with a background context and asserts
// that it succeeds and writes exactly the text of output.txt, the file beside the test
// that the docs show as the example's output.
func MatchesOutputFile(t *testing.T, run func(context.Context, io.Writer) error) {
	t.Helper()
	want, err := os.ReadFile("output.txt")
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, string(want), out.String())
}
