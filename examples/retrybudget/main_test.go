package main

import (
	"testing"

	"github.com/resilience4go/resilience4go/internal/exampletest"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The example's output, on its manual clock: the first 5 calls spend the floor of 10
// retries; from then on each call makes one attempt until the calls are more than 50
// (20% of them is then above 10), and 100 calls cost the service 120 attempts, not 300.
// The policy's page on the site shows output.txt as the example's output.
func TestOutput(t *testing.T) {
	exampletest.MatchesOutputFile(t, run)
}
