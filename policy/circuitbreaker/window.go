package circuitbreaker

import "time"

// outcome is one recorded call: a success or failure, slow or not.
type outcome uint8

const (
	failedBit outcome = 1 << iota
	slowBit
)

// counts aggregates outcomes.
type counts struct {
	calls, failed, slow int
}

func (c *counts) add(o outcome) {
	c.calls++
	c.failed += int(o & failedBit)
	c.slow += int(o&slowBit) >> 1
}

func (c *counts) sub(o outcome) {
	c.calls--
	c.failed -= int(o & failedBit)
	c.slow -= int(o&slowBit) >> 1
}

func (c *counts) addCounts(d counts) {
	c.calls += d.calls
	c.failed += d.failed
	c.slow += d.slow
}

func (c *counts) subCounts(d counts) {
	c.calls -= d.calls
	c.failed -= d.failed
	c.slow -= d.slow
}

// rates returns the failure and slow-call rates in percent, or -1 for both while fewer
// than minimum outcomes are counted.
func (c counts) rates(minimum int) (failure, slow float64) {
	if c.calls < minimum || c.calls == 0 {
		return -1, -1
	}
	n := float64(c.calls)
	return float64(c.failed) * 100 / n, float64(c.slow) * 100 / n
}

// window is the closed-state sliding window. Count-based, it is a ring of the last size
// outcomes; time-based, a ring of size 1-second buckets indexed by the second of the clock
// (second s lives in bucket s mod size), the newest being latest. Either way total is
// kept up to date, so reading the rates costs nothing. Not safe for concurrent use: the
// breaker guards it with its mutex.
type window struct {
	timeBased bool
	size      int
	total     counts

	ring []outcome // count-based
	head int       // count-based: where the next outcome goes (the oldest, once full)

	buckets []counts // time-based
	latest  int64    // time-based: the second of the newest bucket
}

func newWindow(t string, size int) window {
	w := window{timeBased: t == TimeBased, size: size}
	if w.timeBased {
		w.buckets = make([]counts, size)
	} else {
		w.ring = make([]outcome, size)
	}
	return w
}

func second(now int64) int64 { return now / int64(time.Second) }

// record adds an outcome observed at clock time now (ns).
func (w *window) record(now int64, o outcome) {
	if !w.timeBased {
		if w.total.calls == w.size {
			w.total.sub(w.ring[w.head])
		}
		w.ring[w.head] = o
		w.total.add(o)
		if w.head++; w.head == w.size {
			w.head = 0
		}
		return
	}
	s := second(now)
	w.advance(s)
	if s <= w.latest-int64(w.size) {
		return // a call that ended before the window's oldest second
	}
	w.buckets[s%int64(w.size)].add(o)
	w.total.add(o)
}

// clean reports whether the window is count-based and full of outcomes that are neither
// failed nor slow: recording another such outcome would change nothing but which slot is
// the oldest, and in a ring of identical outcomes that makes no difference.
func (w *window) clean() bool {
	return !w.timeBased && w.total == counts{calls: w.size}
}

// slide moves a time-based window to clock time now (ns), dropping the buckets that have
// fallen out of it. A count-based window does not move with time.
func (w *window) slide(now int64) {
	if w.timeBased {
		w.advance(second(now))
	}
}

// advance makes second s the newest of a time-based window, emptying the buckets of the
// seconds it skips over (they hold seconds that are now more than size seconds old).
func (w *window) advance(s int64) {
	if s <= w.latest {
		return
	}
	n := int64(w.size)
	if s-w.latest >= n {
		clear(w.buckets)
		w.total = counts{}
	} else {
		for t := w.latest + 1; t <= s; t++ {
			b := &w.buckets[t%n]
			w.total.subCounts(*b)
			*b = counts{}
		}
	}
	w.latest = s
}

// reset empties the window at clock time now (ns).
func (w *window) reset(now int64) {
	w.total = counts{}
	w.head = 0 // count-based: slots are rewritten before they are read again
	if w.timeBased {
		clear(w.buckets)
		w.latest = second(now)
	}
}

// resize makes the window hold size calls (count-based) or seconds (time-based), keeping
// the most recent outcomes that fit: the last min(held, size) calls, oldest first, or the
// buckets of the last min(old size, size) seconds up to the newest one. It allocates the
// new ring.
func (w *window) resize(size int) {
	var total counts
	if w.timeBased {
		buckets := make([]counts, size)
		old, n := int64(w.size), int64(size)
		for s := max(w.latest-min(old, n)+1, 0); s <= w.latest; s++ {
			b := w.buckets[s%old]
			buckets[s%n] = b
			total.addCounts(b)
		}
		w.buckets, w.total, w.size = buckets, total, size
		return
	}
	kept := min(w.total.calls, size)
	ring := make([]outcome, size)
	for i := range kept {
		o := w.ring[(w.head-kept+i+w.size)%w.size]
		ring[i] = o
		total.add(o)
	}
	w.ring, w.total, w.size = ring, total, size
	w.head = kept % size
}
