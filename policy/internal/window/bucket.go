package window

import "time"

// Bucket moves the window to now and returns counter k of its j-th oldest bucket (j = 0
// the oldest, Buckets-1 the newest) and how long from now until that bucket leaves the
// window, when nothing newer is added: for a policy that tells when its state, read from
// the sums, would change if no event came (e.g. a throttle's retry-after). j outside
// [0, Buckets) returns 0 and 0.
func (w *Window) Bucket(now time.Duration, j, k int) (count int64, leaves time.Duration) {
	if j < 0 || j >= Buckets {
		return 0, 0
	}
	w.advance(w.index(now))
	i := w.latest - Buckets + 1 + int64(j)
	if i >= 0 {
		count = w.buckets[int(i%Buckets)*w.n+k]
	}
	return count, max(time.Duration((i+Buckets)*w.width)-max(now, 0), 0)
}
