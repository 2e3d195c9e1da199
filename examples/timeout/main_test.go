package main

import (
	"testing"

	"github.com/resilience4go/resilience4go/internal/exampletest"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The example's output, on its manual clock: a call that answers within its 2s is
// returned as is; a call that would take 5s has its context ended at 2s, stops there, and
// fails with the timeout's error, which matches ErrTimeout and context.DeadlineExceeded,
// after an EventExceeded event whose attribute "timeout" is 2s.
// The policy's page on the site shows output.txt as the example's output.
func TestOutput(t *testing.T) {
	exampletest.MatchesOutputFile(t, run)
}
