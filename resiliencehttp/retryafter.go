package resiliencehttp

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// retryAfter returns the delay that h's Retry-After field asks for (RFC 9110 §10.2.3):
// a number of seconds, or an HTTP date, which is taken relative to the response's Date
// field when it has one (both are the server's clock, so the client's clock does not
// matter) and to now otherwise. A date in the past is a delay of 0. ok is false when the
// field is absent or malformed.
func retryAfter(h http.Header, now time.Time) (delay time.Duration, ok bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if v[0] >= '0' && v[0] <= '9' {
		secs, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			if ne, isNum := err.(*strconv.NumError); isNum && ne.Err == strconv.ErrRange {
				return math.MaxInt64, true
			}
			return 0, false
		}
		if secs > uint64(math.MaxInt64/time.Second) {
			return math.MaxInt64, true
		}
		return time.Duration(secs) * time.Second, true
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	if date, err := http.ParseTime(h.Get("Date")); err == nil {
		now = date
	}
	return max(at.Sub(now), 0), true
}
