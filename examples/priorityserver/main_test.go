package main

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/resilience4go/resilience4go/internal/exampletest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The example's output: the header's priority, capped at critical; the function's for a
// request that names none or names none that parses; the transport and the gRPC client
// send their contexts' priorities, which the server reads, capped. The server guide shows
// output.txt as the example's output.
func TestOutput(t *testing.T) {
	exampletest.MatchesOutputFile(t, run)
}
