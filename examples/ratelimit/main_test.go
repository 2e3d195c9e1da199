package main

import (
	"testing"

	"github.com/resilience4go/resilience4go/internal/exampletest"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// SPEC RL-3, RL-6, RL-7, RL-9b: the example's output, on its manual clock: a burst of 5 passes,
// the 6th call is refused at once with a retry-after of one emission interval (200ms)
// because its permit is beyond MaxWait, and waits for it once it is within MaxWait; on its
// own, a refused Reserve's Delay is the retry-after, after which a permit is free; per
// client, one client's spent quota leaves another's untouched.
// The policy's page on the site shows output.txt as the example's output.
func TestOutput(t *testing.T) {
	exampletest.MatchesOutputFile(t, run)
}
