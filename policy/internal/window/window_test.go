package window_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience4go/resilience4go/policy/internal/window"
)

// An event counts for more than span − span/20 and at most span after it happened; the
// counters of a bucket are independent.
func TestWindow_SlidesBucketByBucket(t *testing.T) {
	const span = 10 * time.Second
	const width = span / window.Buckets
	w := window.New(span, 2)
	assert.Equal(t, width, w.Width())
	w.Add(0, 0, 1)
	w.Add(width-1, 0, 2) // the same bucket as 0
	w.Add(width, 0, 4)   // the next one
	w.Add(width, 1, 1)

	assert.Equal(t, []int64{7, 1}, []int64{w.Sum(span-1, 0), w.Sum(span-1, 1)}, "everything still counts")
	assert.Equal(t, []int64{4, 1}, []int64{w.Sum(span, 0), w.Sum(span, 1)}, "bucket 0 left at span")
	assert.Equal(t, int64(4), w.Sum(span+width-1, 0))
	assert.Equal(t, []int64{0, 0}, []int64{w.Sum(span+width, 0), w.Sum(span+width, 1)})

	// An event older than the newest bucket counts in its own bucket while that is in
	// the window, and not at all once it is out.
	w.Add(3*span, 0, 1)
	w.Add(3*span-width, 0, 1)
	w.Add(2*span, 0, 1)
	assert.Equal(t, int64(2), w.Sum(3*span, 0))
	assert.Equal(t, int64(1), w.Sum(4*span-width, 0), "the bucket before 3·span left first")

	// A jump of more than a window empties it at once.
	w.Add(100*span, 1, 5)
	assert.Equal(t, []int64{0, 5}, []int64{w.Sum(100*span, 0), w.Sum(100*span, 1)})

	// A negative time counts as 0; a negative delta takes back.
	w = window.New(span, 1)
	w.Add(-time.Second, 0, 3)
	w.Add(0, 0, -1)
	assert.Equal(t, int64(2), w.Sum(0, 0))
}

// A span under 20ns, or one that is not a multiple of 20ns, has buckets rounded down to
// the nanosecond, at least 1ns.
func TestWindow_WidthRoundedDown(t *testing.T) {
	for _, span := range []time.Duration{0, -time.Second, 5, 39} {
		w := window.New(span, 0)
		assert.Equal(t, time.Duration(1), w.Width(), "span %v", span)
		w.Add(0, 0, 1)
		assert.Equal(t, int64(1), w.Sum(19, 0))
		assert.Zero(t, w.Sum(20, 0))
	}
	assert.Equal(t, 2*time.Nanosecond, window.New(40, 1).Width())
}

// Adding and summing allocate nothing.
func TestWindow_ZeroAlloc(t *testing.T) {
	w := window.New(time.Second, 2)
	now := time.Duration(0)
	allocs := testing.AllocsPerRun(1000, func() {
		now += time.Millisecond
		w.Add(now, 1, 1)
		_ = w.Sum(now, 1)
	})
	assert.Zero(t, allocs)
}

// Bucket reads the buckets oldest first, each with the time until it leaves the window.
func TestWindow_Bucket(t *testing.T) {
	const span = 20 * time.Second // 1s buckets
	w := window.New(span, 2)
	w.Add(0, 0, 3)
	w.Add(5*time.Second, 1, 2)
	now := 19*time.Second + 500*time.Millisecond
	c, leaves := w.Bucket(now, 0, 0)
	assert.Equal(t, int64(3), c)
	assert.Equal(t, 500*time.Millisecond, leaves, "bucket [0s, 1s) leaves at 20s")
	c, leaves = w.Bucket(now, 5, 1)
	assert.Equal(t, int64(2), c)
	assert.Equal(t, 5*time.Second+500*time.Millisecond, leaves)
	c, leaves = w.Bucket(now, window.Buckets-1, 0)
	assert.Zero(t, c)
	assert.Equal(t, 19*time.Second+500*time.Millisecond, leaves, "now's bucket, begun at 19s, leaves at 39s")
	c, leaves = w.Bucket(now, window.Buckets, 0)
	assert.Zero(t, c)
	assert.Zero(t, leaves)
	// Early on, the buckets before time 0 are empty.
	w = window.New(span, 1)
	c, leaves = w.Bucket(0, 0, 0)
	assert.Zero(t, c)
	assert.Equal(t, time.Second, leaves, "index -19 would leave at 1s")
}

// Oldest is the start of the oldest bucket the window still counts.
func TestWindow_Oldest(t *testing.T) {
	const span = 10 * time.Second
	const width = span / window.Buckets
	w := window.New(span, 1)
	assert.Equal(t, time.Duration(0), w.Oldest(span-1), "not yet a whole window since 0")
	assert.Equal(t, width, w.Oldest(span))
	assert.Equal(t, 4*width, w.Oldest(span+3*width+1))
	w.Add(4*width-1, 0, 1)
	assert.Zero(t, w.Sum(span+3*width+1, 0), "older than Oldest: not counted")
	w.Add(4*width, 0, 1)
	assert.Equal(t, int64(1), w.Sum(span+3*width+1, 0), "at Oldest: counted")
}
