package main

import (
	"testing"

	"github.com/resilience4go/resilience4go/internal/exampletest"

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
	exampletest.MatchesOutputFile(t, run)
}
