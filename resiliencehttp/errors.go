package resiliencehttp

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/resilience4go/resilience4go/internal/retryhint"
	"github.com/resilience4go/resilience4go/policy"
)

// ErrNotFailure is matched by a StatusError whose status is retried but is not a failure
// (by default 429 Too Many Requests): the dependency said "later", not "broken"; and by
// the error of an attempt that was never sent because the request's body cannot be sent
// again. A breaker built with circuitbreaker.IgnoreOn(ErrNotFailure, ratelimit.ErrExceeded)
// ignores it, and the refusals of the transport's own rate limiter, counting them neither
// as successes nor as failures: neither says that the dependency is broken. Without it,
// every StatusError counts as a failure, 429 included.
var ErrNotFailure = errors.New("resiliencehttp: response status is not a failure")

// StatusError is how the RoundTripper of NewTransport tells its policies that a response did not succeed: a
// status it retries (429, 503) or one that is a failure for the circuit breaker (5xx).
// The caller of RoundTrip does not see it when the retries end: it gets the response.
// It shows in the policies' events (retry.EventAttempt, retry.EventExhausted), in a Fallback's
// error, and in RoundTrip's error when the request's context ended during a wait.
//
// It matches ErrNotFailure when its status is not a failure. It
// implements policy.RetryAfter (the response's Retry-After delay, which a retry waits
// instead of its backoff) and policy.NeverRetried (true for a status that is not
// retried, or a request that cannot be sent again).
type StatusError struct {
	resp    *http.Response
	hint    retryhint.Hint // the Retry-After delay, and whether the response is retried
	failure bool
}

// Error returns "resiliencehttp: <method> <url>: <status>", e.g.
// `resiliencehttp: GET http://api.example/v1/items: 503 Service Unavailable`. A
// StatusError without a response (its zero value) returns
// "resiliencehttp: unsuccessful response status".
func (e *StatusError) Error() string {
	if e == nil || e.resp == nil {
		return "resiliencehttp: unsuccessful response status"
	}
	var b strings.Builder
	b.WriteString("resiliencehttp: ")
	if r := e.resp.Request; r != nil && r.URL != nil {
		b.WriteString(r.Method)
		b.WriteByte(' ')
		b.WriteString(r.URL.Redacted())
		b.WriteString(": ")
	}
	if e.resp.Status != "" {
		b.WriteString(e.resp.Status)
	} else {
		b.WriteString(strconv.Itoa(e.resp.StatusCode))
	}
	return b.String()
}

// Response returns the response (its StatusCode is the status), or nil. Its body belongs
// to the transport, which drains and closes it, unless it is the response that RoundTrip
// returns; read it only in a Fallback, before returning.
func (e *StatusError) Response() *http.Response {
	if e == nil {
		return nil
	}
	return e.resp
}

// Is reports whether target is ErrNotFailure, for a status that is not a failure.
func (e *StatusError) Is(target error) bool {
	return target == ErrNotFailure && (e == nil || !e.failure)
}

// RetryAfter returns the delay of the response's Retry-After header (seconds, or an HTTP
// date), and false when it has none (policy.RetryAfter).
func (e *StatusError) RetryAfter() (time.Duration, bool) { return e.retryHint().RetryAfter() }

// NeverRetried reports whether no retry may retry the response (policy.NeverRetried): its
// status is not one to retry, its Retry-After is beyond TransportConfig.MaxRetryAfter or
// the request's deadline, or its request cannot be sent again.
func (e *StatusError) NeverRetried() bool { return e.retryHint().NeverRetried() }

// retryHint returns e's hint; nil for a nil e.
func (e *StatusError) retryHint() *retryhint.Hint {
	if e == nil {
		return nil
	}
	return &e.hint
}

var (
	_ policy.RetryAfter   = (*StatusError)(nil)
	_ policy.NeverRetried = (*StatusError)(nil)
)

// noRetry marks an attempt's error that must not be retried: the request cannot be sent
// again. RoundTrip returns the error inside.
type noRetry struct{ err error }

func (e *noRetry) Error() string      { return e.err.Error() }
func (e *noRetry) Unwrap() error      { return e.err }
func (e *noRetry) NeverRetried() bool { return true }
