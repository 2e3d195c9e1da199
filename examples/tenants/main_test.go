package main

import (
	"testing"

	"github.com/resilience4go/resilience4go/internal/exampletest"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The example's output, on its manual clock (SPEC KY-1, KY-2, HM-7, HM-8): acme passes 5
// requests of 6 and bolt 2, each told its own quota in Ratelimit-Policy; bolt, raised to
// 10 per second a second later, passes all 3 of the next; acme's export (3 permits) passes,
// its report (3 more, decided inside the handler, HM-9) is refused with 2 left, and a
// request of 1 still passes.
// The rate limiter's page on the site shows output.txt as the example's output.
func TestOutput(t *testing.T) {
	exampletest.MatchesOutputFile(t, run)
}
