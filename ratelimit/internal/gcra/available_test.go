package gcra

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// SPEC RL-11: with 5 permits per second (T = 200ms, tau = 800ms), the permits free now
// fall by one for each T the TAT runs ahead, from 5 down to 0 past the burst.
func TestAvailable_RL11(t *testing.T) {
	const ms = int64(1_000_000)
	for ahead, want := range map[int64]int{
		-1 * ms: 5, 0: 5, 1: 4, 200 * ms: 4, 201 * ms: 3, 800 * ms: 1, 800*ms + 1: 0, 5000 * ms: 0,
	} {
		assert.Equal(t, want, Available(ahead, 200*ms, 800*ms, 5), "ahead %d", ahead)
	}
}
