package contracttest

import (
	"fmt"
	"testing"
	"time"

	"github.com/resilience4go/resilience4go/internal/ctxtest"
)

// ArrivalCases runs each, as a subtest, in every situation a call whose context is
// already over may find at a policy with a queue: each of ctxtest.OverContexts, with
// MaxWait 0 (no waiting) or one hour, and with room for the call (full false) or none
// (full true). The subtests are named "<context>/maxWait=<d>/full=<bool>".
func ArrivalCases(t *testing.T, each func(t *testing.T, over ctxtest.Over, maxWait time.Duration, full bool)) {
	t.Helper()
	for _, over := range ctxtest.OverContexts() {
		for _, maxWait := range []time.Duration{0, time.Hour} {
			for _, full := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/maxWait=%v/full=%v", over.Name, maxWait, full), func(t *testing.T) {
					each(t, over, maxWait, full)
				})
			}
		}
	}
}
