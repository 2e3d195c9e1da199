// Package nextpermit is what a retry reads of a rate limiter's rejection, so that the retry
// package does not import the limiter's.
package nextpermit

import "time"

// Error is implemented by a rate limiter's rejection (package ratelimit's
// *ExceededError): RetryIn tells how long, from the moment it is called, until the
// limiter that refused the call has its next permit free, read live from that limiter; ok
// is false when the error cannot tell (a per-key limiter's rejection, which is shared by
// every key). It is not a policy.RetryAfter: a retry waits for the next permit only when
// asked to (the retry package's WaitForPermit option), and only for its own composition's
// limiter.
type Error interface {
	error
	// InstanceID is the id of the limiter that refused the call.
	InstanceID() string
	// RetryIn is the time until that limiter's next permit is free, ≥ 0.
	RetryIn() (wait time.Duration, ok bool)
}
