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

// The example's output, on its manual clock: a call that answers within its 2s is
// returned as is; a call that would take 5s has its context ended at 2s, stops there, and
// fails with the timeout's error, which matches ErrTimeout and context.DeadlineExceeded,
// after an EventExceeded event whose attribute "timeout" is 2s.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, `  300ms "results for books" <nil> (after 300ms; timed out: false, deadline exceeded: false)
   2.3s   event TimeoutExceeded Search.Query at=2.3s timeout=2s err=timeout: call to "Search.Query" timed out after 2s
   2.3s "" timeout: call to "Search.Query" timed out after 2s (after 2s; timed out: true, deadline exceeded: true)
`, out.String())
}
