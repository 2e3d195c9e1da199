package circuitbreaker

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/contract"
)

// A resized count-based window keeps the last min(held, size) outcomes, oldest first, and
// then slides as a window of the new size: it agrees with a naive list throughout.
func TestWindowResizeCountMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	w := newWindow(CountBased, 5)
	size := 5
	var naive []outcome
	for i := range 5000 {
		if rng.IntN(40) == 0 {
			size = 1 + rng.IntN(12)
			w.resize(size)
			naive = naive[max(len(naive)-size, 0):]
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
		require.Len(t, w.ring, size)
	}
}

// A resized time-based window keeps the buckets of the last min(old size, size) seconds
// up to its newest one, and then slides as a window of the new size.
func TestWindowResizeTimeMatchesNaive(t *testing.T) {
	type rec struct {
		at int64
		o  outcome
	}
	rng := rand.New(rand.NewPCG(9, 10))
	size := 4
	w := newWindow(TimeBased, size)
	var naive []rec
	now := int64(0)
	for i := range 5000 {
		if rng.IntN(30) == 0 {
			old := size
			size = 1 + rng.IntN(10)
			w.resize(size)
			keepFrom := now/sec - int64(min(old, size)) // seconds after it are kept
			var kept []rec
			for _, r := range naive {
				if r.at/sec > keepFrom {
					kept = append(kept, r)
				}
			}
			naive = kept
		}
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
		require.Len(t, w.buckets, size)
	}
}

// Resizing a time-based window early in the clock's life (newest second below the
// size) skips the seconds before 0.
func TestWindowResizeTimeNearZero(t *testing.T) {
	w := newWindow(TimeBased, 3)
	w.record(0, failedBit)
	w.record(sec, slowBit)
	w.resize(10)
	assert.Equal(t, counts{calls: 2, failed: 1, slow: 1}, w.total)
	w.resize(1)
	assert.Equal(t, counts{calls: 1, slow: 1}, w.total, "only second 1 fits")
}

// SPEC RC-1: resizing keeps the clean flag in step with the window: a full window of fast
// successes grown is no longer full; shrunk, it is full again.
func TestReconfigure_RC1_ResizeKeepsCleanFlag(t *testing.T) {
	f := newCleanFixture(t, SlidingWindowSize(4), MinimumCalls(4))
	f.oks(4)
	require.True(t, f.b.clean.Load())
	c := f.b.Config()
	c.SlidingWindowSize = 8
	require.NoError(t, f.b.Reconfigure(c))
	assert.False(t, f.b.clean.Load(), "4 of 8: not full")
	checkClean(t, f.b)
	assert.Equal(t, counts{calls: 4}, f.counts())

	f.oks(4)
	assert.True(t, f.b.clean.Load())
	f.do(cleanStep{err: errCleanBoom})
	assert.False(t, f.b.clean.Load())
	c.SlidingWindowSize = 3 // the failure is the newest: kept
	require.NoError(t, f.b.Reconfigure(c))
	assert.Equal(t, counts{calls: 3, failed: 1}, f.counts())
	checkClean(t, f.b)
	c.SlidingWindowSize = 2
	f.oks(2)
	require.NoError(t, f.b.Reconfigure(c))
	assert.True(t, f.b.clean.Load(), "the last two were fast successes")
	checkClean(t, f.b)
	f.oks(3)
	assert.Equal(t, counts{calls: 2}, f.counts())
}

// The registry sees the configuration in force, with the predicate, which Reconfigure
// keeps.
func TestReconfigure_DescriptorSeesConfigInForce(t *testing.T) {
	pred := func(int, error) bool { return false }
	s := defaults()
	contract.Apply(&s, []Option{RecordIf(pred)})
	b, err := build(s)
	require.NoError(t, err)
	c := b.Config()
	c.WaitInOpen = time.Second
	require.NoError(t, b.Reconfigure(c))
	got := descriptor.Of(b).(contract.Shared[Config])
	assert.Equal(t, c, got.Config)
	assert.Same(t, s.recordIf, got.If)
	assert.Same(t, s.recordIf, b.cur.Load().cls.If, "the new rules classify with the same predicate")
}
