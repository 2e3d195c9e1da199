package retry

import (
	"errors"
	"time"

	"github.com/resilience4go/resilience4go/policy"
)

// waitAfter returns the wait after failed attempt n, whose error is err: the delay that
// err asks for (policy.RetryAfter, e.g. an HTTP Retry-After header), as is, or else the
// jittered backoff.
func (r *Retry) waitAfter(n int, err error) time.Duration {
	if ra, ok := errors.AsType[policy.RetryAfter](err); ok {
		if d, ok := ra.RetryAfter(); ok {
			return max(d, 0)
		}
	}
	return r.wait(n)
}
