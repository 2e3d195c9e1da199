// Package gcra holds the arithmetic of GCRA that the in-process limiter and its stores
// share.
package gcra

// Available is how many calls would pass now without waiting when the TAT runs ahead of
// now by ahead ns, for emission interval interval, burst tolerance tau = (permits-1)·T
// and permits permits: permits when the TAT is not ahead, 0 when it is past the burst.
func Available(ahead, interval, tau int64, permits int) int {
	if ahead <= 0 {
		return permits
	}
	slack := tau - ahead
	if slack < 0 {
		return 0
	}
	return int(min(slack/interval+1, int64(permits)))
}
