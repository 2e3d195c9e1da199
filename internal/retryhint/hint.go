// Package retryhint holds what the client adapters (resiliencehttp, resiliencegrpc) make
// of a server's unsuccessful answer for a retry: the delay the server asked for, and
// whether the call may be retried at all; and how the server adapters write the delay
// they ask a refused client to wait.
package retryhint

import (
	"strings"
	"time"

	"github.com/resilience4go/resilience4go/internal/r4c"
)

// DefaultMaxDelay is the longest server delay a client adapter waits when its
// configuration leaves it 0: one minute.
const DefaultMaxDelay = time.Minute

// Hint is a server's delay and whether a retry may retry the call it answered. The
// adapters' StatusError hold one and implement policy.RetryAfter and policy.NeverRetried
// with its methods, which a nil *Hint (that of a nil StatusError) answers too. It is not
// modified once its error is made.
type Hint struct {
	Delay    time.Duration // the server's delay, when HasDelay
	HasDelay bool          // the server asked for a delay
	Retry    bool          // a retry may retry the call
}

// RetryAfter returns the delay the server asked for, and false when it asked for none
// (policy.RetryAfter): a retry waits it instead of its own backoff.
func (h *Hint) RetryAfter() (time.Duration, bool) {
	if h == nil {
		return 0, false
	}
	return h.Delay, h.HasDelay
}

// NeverRetried reports whether no retry may retry the call (policy.NeverRetried): true
// for a nil h.
func (h *Hint) NeverRetried() bool { return h == nil || !h.Retry }

// Fits reports whether the server's delay, if it asked for one, is at most maxDelay and
// ends before deadline (the zero time: none): a delay that does not fit is not waited,
// and the call is not retried.
func (h *Hint) Fits(maxDelay time.Duration, deadline time.Time) bool {
	return !h.HasDelay || h.Delay <= maxDelay && (deadline.IsZero() || time.Until(deadline) > h.Delay)
}

// MaxDelay returns the longest server delay a client waits, configured as d under key
// (e.g. "resiliencehttp.maxRetryAfter"): d, or DefaultMaxDelay for 0. A negative d is
// R4C-ATR-004.
func MaxDelay(key string, d time.Duration) (time.Duration, error) {
	switch {
	case d < 0:
		return 0, r4c.Errorf(r4c.NegativeDuration, key, d.String(),
			"%s must not be negative (0 means one minute)", key[strings.LastIndexByte(key, '.')+1:])
	case d == 0:
		return DefaultMaxDelay, nil
	}
	return d, nil
}

// Ceil returns d in whole units, rounded up, so that a client that waits that many never
// comes back before d has passed; 0 for d ≤ 0: a server's delay as its field carries it
// (Retry-After in seconds, grpc-retry-pushback-ms in milliseconds). unit must be positive.
func Ceil(d, unit time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	n := int64(d / unit)
	if d%unit != 0 {
		n++
	}
	return n
}
