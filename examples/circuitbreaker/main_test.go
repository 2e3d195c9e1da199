package main

import (
	"testing"

	"github.com/resilience4go/resilience4go/internal/exampletest"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The example's output, on its manual clock: 4 failures in a window of 4 open the breaker
// (rate 100% ≥ 50%) as the 4th is recorded; the 5th call is refused with a rejection that
// matches ErrOpen and never reaches the service; after WaitInOpen (10s) the next call moves
// the breaker to half-open, and two successful trial calls close it with an empty window.
// The policy's page on the site shows output.txt as the example's output.
func TestOutput(t *testing.T) {
	exampletest.MatchesOutputFile(t, run)
}
