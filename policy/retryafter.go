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
