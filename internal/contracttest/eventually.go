package contracttest

import (
	"runtime"
	"testing"
	"time"
)

// Eventually spins, yielding the processor between checks, until cond holds; it fails
// the test with "timed out waiting for: <what>" if cond does not hold within 10s of real
// time. It never sleeps, so it adds no fixed delay to a test. Call it from the test's
// goroutine (it may call t.Fatalf); cond may be called many times and must be safe to
// call concurrently with the code under test.
func Eventually(t testing.TB, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for: %s", what)
		}
		runtime.Gosched()
	}
}
