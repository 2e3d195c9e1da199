package gcra

import "time"

// Interval is T, the emission interval of permits per period: period/permits, rounded up
// to a whole nanosecond so that no window sees more calls than the quota allows. It is 0
// for permits < 1 or period ≤ 0.
func Interval(permits int, period time.Duration) time.Duration {
	if permits < 1 || period <= 0 {
		return 0
	}
	p := time.Duration(permits)
	t := period / p
	if period%p != 0 {
		t++
	}
	return t
}
