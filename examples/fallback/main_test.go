package main

import (
	"testing"

	"github.com/resilience4go/resilience4go/internal/exampletest"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The example's output: a success passes as it is, with no event; a failure is replaced
// by the fallback function's result after a FallbackApplied event carrying the original
// error; an error in IgnoreOn passes through untouched, with no event.
// The policy's page on the site shows output.txt as the example's output.
func TestOutput(t *testing.T) {
	exampletest.MatchesOutputFile(t, run)
}
