// Package window counts events over a sliding time window, in a fixed ring of time
// buckets: a hedge's budget counts calls and hedges with it, a retry budget calls and
// extra attempts.
package window

import "time"

// Buckets is the number of buckets a window is cut into.
const Buckets = 20

// Window holds counters summed over the last span of clock time, in a ring of Buckets
// buckets of span/Buckets each (rounded down to the nanosecond, at least 1ns). Bucket
// index i holds the events of clock times [i·width, (i+1)·width) and lives in slot
// i mod Buckets. The newest index is latest; the ring holds indexes latest-Buckets+1 ..
// latest, so an event stays counted for more than (Buckets-1)·width and at most
// Buckets·width after it happened: for a span that is a multiple of 20ns, more than
// span − span/20 and at most span. Each bucket holds the same number of counters.
//
// Its memory is fixed when it is made; adding and summing allocate nothing. It is not
// safe for concurrent use: its owner serializes calls (a hedge's budget under its lock),
// and then a check of Sum followed by Add at the same time is atomic.
type Window struct {
	width   int64   // ns per bucket, at least 1
	n       int     // counters per bucket
	latest  int64   // the index of the newest bucket
	buckets []int64 // Buckets × n: bucket slot s's counter k is buckets[s*n+k]
	totals  []int64 // the sums of each counter over the ring
}

// New returns an empty window over span (at most 0 counts as 1ns) with counters
// counters per bucket (at least 1).
func New(span time.Duration, counters int) *Window {
	counters = max(counters, 1)
	return &Window{
		width:   max(int64(span)/Buckets, 1),
		n:       counters,
		buckets: make([]int64, Buckets*counters),
		totals:  make([]int64, counters),
	}
}

// Width returns the width of a bucket.
func (w *Window) Width() time.Duration { return time.Duration(w.width) }

// index returns the bucket index of clock time now (a negative time counts as 0).
func (w *Window) index(now time.Duration) int64 { return max(int64(now), 0) / w.width }

// advance makes index i the newest, emptying the buckets it skips over. An earlier i
// changes nothing.
func (w *Window) advance(i int64) {
	if i <= w.latest {
		return
	}
	if i-w.latest >= Buckets {
		clear(w.buckets)
		clear(w.totals)
	} else {
		for j := w.latest + 1; j <= i; j++ {
			b := w.buckets[int(j%Buckets)*w.n:][:w.n]
			for k, v := range b {
				w.totals[k] -= v
			}
			clear(b)
		}
	}
	w.latest = i
}

// Add moves the window to now and adds delta to counter k (0 ≤ k < counters) in now's
// bucket. A time already out of the window (read from the clock before a later one was
// added, more than a window ago) counts nothing; a time before the newest bucket but in
// the window counts in its own bucket.
func (w *Window) Add(now time.Duration, k int, delta int64) {
	i := w.index(now)
	w.advance(i)
	if i <= w.latest-Buckets {
		return
	}
	w.buckets[int(i%Buckets)*w.n+k] += delta
	w.totals[k] += delta
}

// Oldest moves the window to now and returns the earliest clock time whose events it
// still counts: the start of its oldest bucket (0 while the window has not yet passed
// since clock time 0).
func (w *Window) Oldest(now time.Duration) time.Duration {
	w.advance(w.index(now))
	return time.Duration(max(w.latest-Buckets+1, 0) * w.width)
}

// Sum moves the window to now and returns the sum of counter k over it.
func (w *Window) Sum(now time.Duration, k int) int64 {
	w.advance(w.index(now))
	return w.totals[k]
}
