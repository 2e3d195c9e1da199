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

// The example's output, on its manual clock: two calls start at once; the third queues
// and is handed the slot the first gives back, at 300ms, after an EventWaited of 300ms;
// the fourth, still queued when its MaxWait of 500ms passes, fails with a rejection that
// matches ErrFull, after an EventRejected.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, `     0s 300ms report starts
     0s 2s report starts
  300ms   event BulkheadWaited Reports.Render at=300ms wait=300ms
  300ms 2s report starts
  300ms "300ms report" <nil> (full: false)
  500ms   event BulkheadRejected Reports.Render at=500ms wait=500ms err=bulkhead: bulkhead "Reports.Render" is full
  500ms "" bulkhead: bulkhead "Reports.Render" is full (full: true)
     2s "2s report" <nil> (full: false)
   2.3s "2s report" <nil> (full: false)
`, out.String())
}
