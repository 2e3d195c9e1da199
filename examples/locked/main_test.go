package main

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/resilience4go/resilience4go/internal/exampletest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// SPEC LK-1, LK-2, LK-3: the locked retry makes 2 attempts though its instance key says
// 5, and a reload to 7 leaves it at 2, while the unlocked one takes 5, then 7; the
// ignored key is reported once at the wrap and once more when the reload changes its
// value, and listed with R4C-CFG-014.
// The configuration guide shows output.txt as the example's output.
func TestOutput(t *testing.T) {
	exampletest.MatchesOutputFile(t, run)
}
