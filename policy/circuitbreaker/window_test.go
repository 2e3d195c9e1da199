package circuitbreaker

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sec = int64(time.Second)

// The count-based window agrees with a naive list of the last n outcomes.
func TestCountWindowMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{1, 2, 3, 7, 50} {
		w := newWindow(CountBased, size)
		var naive []outcome
		for i := range 1000 {
			if i%397 == 0 {
				w.reset(0)
				naive = nil
			}
			o := outcome(rng.IntN(4))
			w.record(0, o)
			naive = append(naive, o)
			if len(naive) > size {
				naive = naive[1:]
			}
			var want counts
			for _, n := range naive {
				want.add(n)
			}
			require.Equal(t, want, w.total, "size %d, step %d", size, i)
		}
	}
}

// The time-based window agrees with a naive list of (time, outcome) for the last n
// seconds, with outcomes recorded slightly out of order as concurrent calls can.
func TestTimeWindowMatchesNaive(t *testing.T) {
	type rec struct {
		at int64
		o  outcome
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, size := range []int{1, 2, 5, 10} {
		w := newWindow(TimeBased, size)
		var naive []rec
		now := int64(0)
		for i := range 3000 {
			now += rng.Int64N(sec * int64(size) / 3)
			at := max(now-rng.Int64N(sec/2), 0)
			o := outcome(rng.IntN(4))
			w.record(at, o)
			naive = append(naive, rec{at, o})
			w.slide(now)
			var want counts
			for _, r := range naive {
				if r.at/sec > now/sec-int64(size) {
					want.add(r.o)
				}
			}
			require.Equal(t, want, w.total, "size %d, step %d", size, i)
		}
	}
}

func TestTimeWindowDropsTooOldOutcome(t *testing.T) {
	w := newWindow(TimeBased, 2)
	w.record(5*sec, failedBit)
	w.record(3*sec+sec/2, failedBit) // second 3: before the window (seconds 4..5)
	assert.Equal(t, counts{calls: 1, failed: 1}, w.total)
	w.record(4*sec, slowBit)
	assert.Equal(t, counts{calls: 2, failed: 1, slow: 1}, w.total)
}

func TestRates(t *testing.T) {
	f, s := counts{calls: 3, failed: 1, slow: 3}.rates(3)
	assert.InDelta(t, 33.333, f, 0.001)
	assert.Equal(t, 100.0, s)
	f, s = counts{calls: 2}.rates(3)
	assert.Equal(t, -1.0, f)
	assert.Equal(t, -1.0, s)
	f, _ = counts{}.rates(0)
	assert.Equal(t, -1.0, f)
}
