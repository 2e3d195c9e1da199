package main

import (
	"testing"

	"github.com/resilience4go/resilience4go/internal/exampletest"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The output is the same on every run: client and server share a manual clock. It shows,
// over real gRPC on loopback, the server's per-peer limit refusing a burst's excess with
// ResourceExhausted and the exact RetryInfo delay to the next permit, health checks exempt
// from it, a Watch stream holding the bulkhead's one slot until it ends, the client's
// retry waiting its own backoff after Unavailable and the server's RetryInfo after
// ResourceExhausted, a non-idempotent method not retried, and the client's breaker,
// opened by Internal statuses, failing calls and stream creations fast without reaching
// the server. README.md shows output.txt as the example's output.
func TestOutput(t *testing.T) {
	exampletest.MatchesOutputFile(t, run)
}
