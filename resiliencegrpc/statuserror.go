package resiliencegrpc

import (
	"context"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/resilience4go/resilience4go/internal/retryhint"
	"github.com/resilience4go/resilience4go/policy"
)

// serverError is how a client interceptor tells its policies, and the caller, that the
// server answered a call with a status other than OK. It carries that status
// (GRPCStatus, so status.Code and status.FromError work on it as on the error gRPC
// returned) and what the client made of it:
//
//   - RetryAfter is the server's delay, from the status's RetryInfo detail or the
//     grpc-retry-pushback-ms trailer (policy.RetryAfter: a retry waits it instead of its
//     own backoff);
//   - NeverRetried is true unless the code is one of the client's retried codes, the
//     method is idempotent and has no retryPolicy in the connection's service config
//     (gRPC retries that one itself), and the server's delay, if any, fits before the
//     call's deadline and within ClientConfig.MaxRetryDelay (policy.NeverRetried);
//   - Is matches ErrNotFailure for a code that is not a failure for the client; ratelimit.ErrExceeded for ResourceExhausted with a server delay (the
//     server's rate limiter said when to come back), unless the client counts
//     ResourceExhausted as a failure; context.DeadlineExceeded for
//     DeadlineExceeded and context.Canceled for Canceled.
//
// A serverError is not modified after it is made, and is safe for concurrent use.
type serverError struct {
	st      *status.Status
	method  string
	hint    retryhint.Hint // the server's delay, and whether the call is retried
	failure bool
	ignored bool
}

// Error returns the status's text, as gRPC prints it, after the method: "resiliencegrpc:
// /pkg.Service/Method: rpc error: code = Unavailable desc = …".
func (e *serverError) Error() string {
	if e == nil || e.st == nil {
		return "resiliencegrpc: unsuccessful status"
	}
	var b strings.Builder
	b.WriteString("resiliencegrpc: ")
	if e.method != "" {
		b.WriteString(e.method)
		b.WriteString(": ")
	}
	b.WriteString(e.st.Err().Error())
	return b.String()
}

// GRPCStatus returns the status the server sent.
func (e *serverError) GRPCStatus() *status.Status {
	if e == nil {
		return nil
	}
	return e.st
}

// Code returns the status's code; codes.Unknown for a serverError without a status.
func (e *serverError) Code() codes.Code {
	if e == nil || e.st == nil {
		return codes.Unknown
	}
	return e.st.Code()
}

// Is reports whether target is ErrNotFailure, ratelimit.ErrExceeded,
// context.DeadlineExceeded or context.Canceled, as the type's comment says.
func (e *serverError) Is(target error) bool {
	if e == nil {
		return false
	}
	switch target {
	case ErrNotFailure:
		return e.ignored
	case errRateLimited:
		return e.Code() == codes.ResourceExhausted && e.hint.HasDelay && !e.failure
	case context.DeadlineExceeded:
		return e.Code() == codes.DeadlineExceeded
	case context.Canceled:
		return e.Code() == codes.Canceled
	}
	return false
}

// RetryAfter returns the delay the server asked for, and false when it asked for none
// (policy.RetryAfter).
func (e *serverError) RetryAfter() (time.Duration, bool) { return e.retryHint().RetryAfter() }

// NeverRetried reports whether no retry may retry the call (policy.NeverRetried).
func (e *serverError) NeverRetried() bool { return e.retryHint().NeverRetried() }

// retryHint returns e's hint; nil for a nil e.
func (e *serverError) retryHint() *retryhint.Hint {
	if e == nil {
		return nil
	}
	return &e.hint
}

var (
	_ policy.RetryAfter   = (*serverError)(nil)
	_ policy.NeverRetried = (*serverError)(nil)
)

// classify turns an attempt's error into what the policies see: a *serverError for the
// retry and the breaker, or a success carrying the status for the caller. again is true
// when the client's retry may send the call again (see onceFor).
func (c *Client) classify(err error, method string, deadline time.Time, trailer metadata.MD, again bool) (outcome, error) {
	st, ok := status.FromError(err)
	if !ok {
		return outcome{}, err // not a status: a policy's error, or another interceptor's
	}
	code := st.Code()
	se := &serverError{st: st, method: method, failure: c.failure.has(code)}
	se.ignored = !se.failure // a success code reaches the breaker as an error only when retried
	se.hint.Delay, se.hint.HasDelay = retryInfo(st)
	if v := trailer[pushbackHeader]; len(v) > 0 && !se.hint.HasDelay { // RetryInfo wins
		ms, perr := strconv.ParseInt(v[0], 10, 64)
		if perr != nil || ms < 0 {
			return c.settle(se) // the server asks not to retry
		}
		se.hint.Delay, se.hint.HasDelay = time.Duration(min(ms, int64(1<<63-1)/int64(time.Millisecond)))*time.Millisecond, true
	}
	se.hint.Retry = c.retry.has(code) && again &&
		(code != codes.ResourceExhausted || se.hint.HasDelay) && se.hint.Fits(c.maxDelay, deadline)
	return c.settle(se)
}

// settle returns se as the attempt's error, or, for a success code that is not retried,
// as the caller's error behind a success.
func (c *Client) settle(se *serverError) (outcome, error) {
	if !se.hint.Retry && c.success.has(se.Code()) {
		return outcome{err: se}, nil
	}
	return outcome{}, se
}
