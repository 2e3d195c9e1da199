package main

import (
	"testing"

	"github.com/resilience4go/resilience4go/internal/exampletest"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The example's output, on its manual clock with a seeded source: while the service
// accepts 5 calls a second of the 20 offered, the client soon sends about 10 a second
// (K × accepts) and throttles the rest; from 20s, when the service accepts every call,
// the throttling fades out within the 10s window, and the client sends all 20 again.
// The policy's page on the site shows output.txt as the example's output.
func TestOutput(t *testing.T) {
	exampletest.MatchesOutputFile(t, run)
}
