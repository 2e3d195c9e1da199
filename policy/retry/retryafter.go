package retry

import (
	"errors"
	"time"

	"github.com/resilience4go/resilience4go/internal/nextpermit"
	"github.com/resilience4go/resilience4go/policy"
)

// waitAfter returns the wait after failed attempt n of a call configured by c, whose
// error is err: the delay that err asks for (policy.RetryAfter, e.g. an HTTP Retry-After
// header), as is; or else the jittered backoff, made at least the time until the next
// permit of the rate limiter that refused the attempt when r waits for that limiter's
// permits (WaitForPermit).
func (r *Retry) waitAfter(c *Config, n int, err error) time.Duration {
	if ra, ok := errors.AsType[policy.RetryAfter](err); ok {
		if d, ok := ra.RetryAfter(); ok {
			return max(d, 0)
		}
	}
	w := r.wait(c, n)
	if c.WaitForPermit || r.src.Always {
		if d, ok := r.nextPermit(err); ok {
			w = max(w, d)
		}
	}
	return w
}

// nextPermit returns the time until the next permit of the rate limiter that refused err:
// ok when err is a nextpermit.Error from a limiter whose permits r waits for (any limiter
// for a retry that permitsFrom did not bind, else the one it names), and that limiter can
// tell.
func (r *Retry) nextPermit(err error) (time.Duration, bool) {
	t, ok := errors.AsType[nextpermit.Error](err)
	if !ok || r.bound && (r.src.Limiter == "" || t.InstanceID() != r.src.Limiter) {
		return 0, false
	}
	if r.src.Rejection != nil && !errors.Is(err, r.src.Rejection) {
		return 0, false // another limiter with the same id
	}
	d, ok := t.RetryIn()
	return max(d, 0), ok
}
