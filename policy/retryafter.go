package policy

import "time"

// RetryAfter is implemented by errors that say when a retry may succeed: an HTTP 429 or
// 503 response with a Retry-After header is one (package resiliencehttp). A retry that
// retries such an error waits RetryAfter's delay instead of its own backoff, with no
// jitter and no cap: the server knows better than the backoff when it will serve again.
// ok = false leaves the backoff in place. Whether the error is retried at all is decided
// as for any other error (retry's lists, NeverRetried). Retry finds it with errors.As, so
// the retry package does not import the error's.
type RetryAfter interface {
	error
	RetryAfter() (delay time.Duration, ok bool)
}

// Throttled is implemented by a rate limiter's rejection (package ratelimit's
// *ExceededError): RetryIn tells how long, from the moment it is called, until the
// limiter that refused the call has its next permit free, read live from that limiter; ok
// is false when the error cannot tell (a per-key limiter's rejection, which is shared by
// every key). It is not a RetryAfter: a retry waits for the next permit only when asked
// to (the retry package's WaitForPermit option), and only for its own composition's
// limiter.
type Throttled interface {
	error
	// InstanceID is the id of the limiter that refused the call.
	InstanceID() string
	// RetryIn is the time until that limiter's next permit is free, ≥ 0.
	RetryIn() (wait time.Duration, ok bool)
}
