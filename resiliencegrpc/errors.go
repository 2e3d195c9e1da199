package resiliencegrpc

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/resilience4go/resilience4go/internal/retryhint"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// ErrNotFailure is matched by a StatusError whose code is not one of the client's failure
// codes: one in neither list (by default Canceled, Unknown, ResourceExhausted and
// DataLoss), or a success code that the retry retries. The CircuitBreaker spec of this
// package ignores it, so it counts neither as a success nor as a failure. (A success code
// that is not retried reaches the breaker as a success.)
var ErrNotFailure = errors.New("resiliencegrpc: status is not a failure")

// Error is the error of a call that one of the policies turned away, as a gRPC status:
// the server interceptors return it for the calls they refuse, and the client interceptors
// for the calls their own policies refuse before or instead of reaching the server.
// GRPCStatus gives the status that Status maps the policy's error to (a rate limiter's
// refusal is ResourceExhausted with a google.rpc.RetryInfo detail); Unwrap gives the
// policy's error, so errors.Is(err, ratelimit.ErrExceeded) and status.Code(err) both
// work on it. An Error is safe for concurrent use.
type Error struct {
	err     error
	limited bool          // a Limit's refusal: ResourceExhausted with RetryInfo of wait
	wait    time.Duration // the time until the key's next permit, for a Limit's refusal
	st      atomic.Pointer[status.Status]
}

// limitMessage is the message of a Limit's refusal.
const limitMessage = "resiliencegrpc: rate limit exceeded"

// Error returns the status's text, as a gRPC status error prints it: "rpc error: code =
// ResourceExhausted desc = resiliencegrpc: rate limit exceeded".
func (e *Error) Error() string {
	if st := e.GRPCStatus(); st != nil {
		return st.Err().Error()
	}
	return "resiliencegrpc: call refused"
}

// GRPCStatus returns the status that the call ends with; grpc's status.FromError and
// status.Code find it, and a gRPC server sends it, details included. The status is made
// the first time it is asked for, and then kept.
func (e *Error) GRPCStatus() *status.Status {
	if e == nil || e.err == nil {
		return nil
	}
	if st := e.st.Load(); st != nil {
		return st
	}
	var st *status.Status
	if e.limited {
		st = throttled(limitMessage, e.wait)
	} else {
		st = Status(e.err)
	}
	if e.st.CompareAndSwap(nil, st) {
		return st
	}
	return e.st.Load()
}

// Unwrap returns the policy's error: its rejection (a policy.Rejection, such as a rate
// limiter's *ratelimit.ExceededError), a *timeout.TimeoutError…
func (e *Error) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.err
}

// Status returns the gRPC status that err stands for. An error that carries a status
// (a gRPC status error, an *Error, a *StatusError, or any error with a GRPCStatus method,
// wrapped or not) keeps it; nil is OK. Other errors map to:
//
//   - a timeout (timeout.ErrTimeout) and any other error matching context.DeadlineExceeded:
//     DeadlineExceeded; context.Canceled: Canceled (also for a policy's refusal that the
//     context ended);
//   - a policy's refusal, a policy.Refuser (the first in err's tree) by its Refusal:
//     policy.RefusalOverloaded is ResourceExhausted, with a google.rpc.RetryInfo detail
//     whose retry_delay is its RetryIn when it tells one (a rate limiter's refusal: the
//     time until the limiter's next permit; a full bulkhead, an adaptive limit's refusal
//     and a call for more permits than a limiter's burst tell none);
//     policy.RefusalUnavailable (an open circuit breaker) is Unavailable; a refusal that
//     does not say why maps as any other error. A user's policy gets the same mapping;
//   - a configuration error (*policy.ConfigError) or a nil context: Internal;
//   - any other error: Unknown.
//
// The status's message is err's text. Status is safe for concurrent use.
func Status(err error) *status.Status {
	if err == nil {
		return status.New(codes.OK, "")
	}
	if st := carried(err); st != nil {
		return st
	}
	msg := err.Error()
	switch {
	case errors.Is(err, context.Canceled):
		return status.New(codes.Canceled, msg)
	case errors.Is(err, context.DeadlineExceeded):
		return status.New(codes.DeadlineExceeded, msg)
	}
	if r, ok := find[policy.Refuser](err); ok {
		switch r.Refusal() {
		case policy.RefusalOverloaded:
			if wait, ok := r.RetryIn(); ok {
				return throttled(msg, wait)
			}
			return status.New(codes.ResourceExhausted, msg)
		case policy.RefusalUnavailable:
			return status.New(codes.Unavailable, msg)
		}
	}
	if _, isConfig := find[*policy.ConfigError](err); isConfig || errors.Is(err, policy.ErrNilContext) {
		return status.New(codes.Internal, msg)
	}
	return status.New(codes.Unknown, msg)
}

// statusError returns err as an error that carries its gRPC status: err itself when it
// already carries one, else an *Error.
func statusError(err error) error {
	if err == nil || carried(err) != nil {
		return err
	}
	return &Error{err: err}
}

// carried returns the status that err, or an error it wraps, carries (a GRPCStatus
// method), or nil.
func carried(err error) *status.Status {
	if gs, ok := find[interface{ GRPCStatus() *status.Status }](err); ok {
		return gs.GRPCStatus()
	}
	return nil
}

// find returns the first error of err's tree, depth first as errors.As walks it, that is
// a T. It is errors.As with a type assertion at each step instead of reflection: a
// refusal's status is found several times faster. Unlike errors.As, it does not call As
// methods; the policies' errors have none.
func find[T any](err error) (T, bool) {
	for err != nil {
		if t, ok := err.(T); ok {
			return t, true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if t, ok := find[T](e); ok {
					return t, true
				}
			}
			var zero T
			return zero, false
		default:
			var zero T
			return zero, false
		}
	}
	var zero T
	return zero, false
}

// retryInfoURL is the type URL of a google.rpc.RetryInfo in an Any.
const retryInfoURL = "type.googleapis.com/google.rpc.RetryInfo"

// throttled returns a ResourceExhausted status with a RetryInfo detail of wait (0 when
// negative). The detail is encoded here, field by field, rather than marshalled through
// reflection: a refusal costs about a quarter less.
func throttled(msg string, wait time.Duration) *status.Status {
	return status.FromProto(&spb.Status{Code: int32(codes.ResourceExhausted), Message: msg,
		Details: []*anypb.Any{{TypeUrl: retryInfoURL, Value: appendRetryInfo(make([]byte, 0, 24), max(wait, 0))}}})
}

// appendRetryInfo appends the wire encoding of RetryInfo{retry_delay: d} to b: field 1, a
// google.protobuf.Duration of field 1 seconds and field 2 nanos, each left out when 0.
func appendRetryInfo(b []byte, d time.Duration) []byte {
	sec, nanos := uint64(d/time.Second), uint64(d%time.Second)
	n := 0
	if sec != 0 {
		n += 1 + protowire.SizeVarint(sec)
	}
	if nanos != 0 {
		n += 1 + protowire.SizeVarint(nanos)
	}
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(n))
	if sec != 0 {
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, sec)
	}
	if nanos != 0 {
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		b = protowire.AppendVarint(b, nanos)
	}
	return b
}

// RetryDelay returns the retry_delay of the google.rpc.RetryInfo detail of err's status,
// and false when err has no status or its status has no RetryInfo (or a negative or
// invalid delay). Use it to read what a server running this package's interceptors (or
// any server that sends RetryInfo) asks a refused client to wait.
func RetryDelay(err error) (time.Duration, bool) {
	st, ok := status.FromError(err)
	if !ok || st == nil {
		return 0, false
	}
	return retryInfo(st)
}

func retryInfo(st *status.Status) (time.Duration, bool) {
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok && ri.GetRetryDelay() != nil {
			if err := ri.GetRetryDelay().CheckValid(); err != nil {
				return 0, false
			}
			if wait := ri.GetRetryDelay().AsDuration(); wait >= 0 {
				return wait, true
			}
			return 0, false
		}
	}
	return 0, false
}

// StatusError is how a client interceptor tells its policies, and the caller, that the
// server answered a call with a status other than OK. It carries that status
// (GRPCStatus, so status.Code and status.FromError work on it as on the error gRPC
// returned) and what the client made of it:
//
//   - RetryAfter is the server's delay, from the status's RetryInfo detail or the
//     grpc-retry-pushback-ms trailer (policy.RetryAfter: a retry waits it instead of its
//     own backoff);
//   - NeverRetried is true unless the code is one of the client's retried codes, the
//     method is idempotent, and the server's delay, if any, fits before the call's
//     deadline and within ClientConfig.MaxRetryDelay (policy.NeverRetried);
//   - Is matches ErrNotFailure for a code that is not a failure for the client; ratelimit.ErrExceeded for ResourceExhausted with a server delay (the
//     server's rate limiter said when to come back), unless the client counts
//     ResourceExhausted as a failure; context.DeadlineExceeded for
//     DeadlineExceeded and context.Canceled for Canceled.
//
// A StatusError is not modified after it is made, and is safe for concurrent use.
type StatusError struct {
	st      *status.Status
	method  string
	hint    retryhint.Hint // the server's delay, and whether the call is retried
	failure bool
	ignored bool
}

// Error returns the status's text, as gRPC prints it, after the method: "resiliencegrpc:
// /pkg.Service/Method: rpc error: code = Unavailable desc = …".
func (e *StatusError) Error() string {
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
func (e *StatusError) GRPCStatus() *status.Status {
	if e == nil {
		return nil
	}
	return e.st
}

// Code returns the status's code; codes.Unknown for a StatusError without a status.
func (e *StatusError) Code() codes.Code {
	if e == nil || e.st == nil {
		return codes.Unknown
	}
	return e.st.Code()
}

// Is reports whether target is ErrNotFailure, ratelimit.ErrExceeded,
// context.DeadlineExceeded or context.Canceled, as the type's comment says.
func (e *StatusError) Is(target error) bool {
	if e == nil {
		return false
	}
	switch target {
	case ErrNotFailure:
		return e.ignored
	case ratelimit.ErrExceeded:
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
func (e *StatusError) RetryAfter() (time.Duration, bool) { return e.retryHint().RetryAfter() }

// NeverRetried reports whether no retry may retry the call (policy.NeverRetried).
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
