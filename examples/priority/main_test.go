package main

import (
	"testing"

	"github.com/resilience4go/resilience4go/internal/exampletest"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The example's output, on its manual clock: batch A and B start, batch C waits (the
// sheddable share of 4 slots is 2); user 1 and the health check start past it; user 2
// waits, and gets the slot the health check gives back at 50ms, ahead of batch C; at
// 200ms batch C, still waiting with 2 calls in flight, is shed for its priority.
// The guide's page on the site shows output.txt as the example's output.
func TestOutput(t *testing.T) {
	exampletest.MatchesOutputFile(t, run)
}
