package contracttest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience4go/resilience4go/internal/ctxtest"
)

// ArrivalCases runs every over context with both MaxWaits and both fullnesses, each once,
// as a named subtest.
func TestArrivalCases(t *testing.T) {
	type seen struct {
		name    string
		want    error
		maxWait time.Duration
		full    bool
	}
	var got []seen
	var names []string
	ArrivalCases(t, func(t *testing.T, over ctxtest.Over, maxWait time.Duration, full bool) {
		got = append(got, seen{over.Name, over.Want, maxWait, full})
		names = append(names, t.Name())
	})
	var want []seen
	for _, o := range ctxtest.OverContexts() {
		for _, w := range []time.Duration{0, time.Hour} {
			want = append(want, seen{o.Name, o.Want, w, false}, seen{o.Name, o.Want, w, true})
		}
	}
	assert.Equal(t, want, got)
	assert.Len(t, want, 12)
	assert.Equal(t, "TestArrivalCases/canceled/maxWait=0s/full=false", names[0])
	assert.Equal(t, "TestArrivalCases/nil/maxWait=1h0m0s/full=true", names[11])
}
