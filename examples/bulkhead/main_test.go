package main

import (
	"testing"

	"github.com/resilience4go/resilience4go/internal/exampletest"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The example's output, on its manual clock: two calls start at once; the third queues
// and is handed the slot the first gives back, at 300ms, after an EventWaited of 300ms;
// the fourth, still queued when its MaxWait of 500ms passes, fails with a rejection that
// matches ErrFull, after an EventRejected.
// The policy's page on the site shows output.txt as the example's output.
func TestOutput(t *testing.T) {
	exampletest.MatchesOutputFile(t, run)
}
