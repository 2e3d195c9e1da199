package main

import (
	"testing"

	"github.com/resilience4go/resilience4go/internal/exampletest"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The example's output, on its manual clock and with its seed: no call is injected into
// while the chaos layer is off; switched on by a reload at rate 0.5, it injects a latency
// and an error into some attempts, the retry saves the calls whose later attempt is left
// alone, and the others fail after three attempts; switched off by the next reload, it
// injects nothing more.
// The policy's page on the site shows output.txt as the example's output.
func TestOutput(t *testing.T) {
	exampletest.MatchesOutputFile(t, run)
}
