package resiliencegrpc

import (
	"context"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/permitwait"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/retryhint"
	"github.com/resilience4go/resilience4go/resilience"
)

// ClientConfig says how a Client reads the statuses its calls end with, and which methods
// it retries or lets through. Its zero value is the default. NewClient reads it once.
type ClientConfig struct {
	// RetryCodes lists the codes a retry retries. Default nil: Unavailable, and
	// ResourceExhausted. ResourceExhausted is retried only when the server said when to
	// come back (a google.rpc.RetryInfo detail, or a grpc-retry-pushback-ms trailer); a
	// server delay is waited instead of the retry's backoff, whatever the code. An empty,
	// non-nil list retries no code. A code outside 1..16 is R4C-ATR-007.
	RetryCodes []codes.Code
	// FailureCodes lists the codes a circuit breaker counts as failures. Default nil:
	// Unavailable, DeadlineExceeded and Internal.
	FailureCodes []codes.Code
	// SuccessCodes lists the codes a circuit breaker counts as successes: the server
	// answered, the request was wrong. Default nil: InvalidArgument, NotFound,
	// AlreadyExists, PermissionDenied, FailedPrecondition, Aborted, OutOfRange,
	// Unimplemented and Unauthenticated. A code in neither list (by default Canceled,
	// Unknown, ResourceExhausted and DataLoss) matches ErrNotFailure, which a breaker with
	// circuitbreaker.IgnoreOn(ErrNotFailure, ratelimit.ErrExceeded) ignores. A code in both lists is R4C-ATR-007.
	SuccessCodes []codes.Code
	// Idempotent names the methods that may be retried: full method names
	// ("/pkg.Service/Method") or whole services ("/pkg.Service/"). A method whose proto
	// definition says `option idempotency_level = IDEMPOTENT` (or NO_SIDE_EFFECTS), found
	// in the global proto registry by its generated code, is idempotent too. Default none:
	// a retry never retries a call to another method, since the server may have acted on
	// it. Nor does it retry a method that the connection's service config gives a
	// retryPolicy: gRPC retries that one itself (see NewClient). A malformed name is
	// R4C-REG-010.
	Idempotent []string
	// Exempt names the methods (full names, or whole services ending in "/") that go
	// straight to the server, through none of the policies: e.g. HealthAndReflection, so
	// that a health check neither trips the breaker nor waits for a permit. Default none.
	// A malformed name is R4C-REG-010.
	Exempt []string
	// MaxRetryDelay is the longest server delay a retry waits; a status that asks for
	// longer is not retried, nor is one whose delay ends after the call's deadline.
	// Default 0, which means one minute. Negative is R4C-ATR-004.
	MaxRetryDelay time.Duration
	// PriorityMetadata names the metadata that carries each call's priority to the
	// server, e.g. "x-request-priority", for a server that reads it (PriorityMetadata):
	// each call, Exempt ones too, is sent with it set to the name of the priority its
	// context carries (policy.PriorityFrom; "critical" when none was set), unless the
	// caller's outgoing metadata has it already. It costs each call four allocations,
	// those of metadata.AppendToOutgoingContext. Default "": none is sent. A name that is
	// not a metadata key of text ("-bin", "grpc-") is R4C-REG-010.
	PriorityMetadata string
}

// Client guards the calls of a gRPC client connection with a composition of a registry's
// policies; its UnaryInterceptor and StreamInterceptor are given to grpc.NewClient with
// grpc.WithChainUnaryInterceptor and grpc.WithChainStreamInterceptor. Build it with
// NewClient. It is safe for concurrent use.
type Client struct {
	unary      func(context.Context, unaryClientCall) (outcome, error)
	stream     func(context.Context, streamClientCall) (outcome, error)
	retry      codeSet
	failure    codeSet
	success    codeSet
	idempotent map[string]struct{}
	exempt     map[string]struct{}
	maxDelay   time.Duration
	protoIdem  sync.Map // full method name → bool, from the proto registry
	priority   string   // ClientConfig.PriorityMetadata, lowercase; "" for none
}

// codeSet is a set of gRPC codes 0..16, as bits.
type codeSet uint32

func (s codeSet) has(c codes.Code) bool { return c < 32 && s&(1<<c) != 0 }

func setOf(cs ...codes.Code) codeSet {
	var s codeSet
	for _, c := range cs {
		s |= 1 << c
	}
	return s
}

// NewClient returns a Client whose calls go through the policies of specs, composed once
// by resilience.Wrap1 in the default order:
//
//	Retry → CircuitBreaker → RateLimiter → Timeout → Bulkhead → the call
//
// id is the instance id of the policies that have no Name, so resilience.Lookup with id
// returns the breaker. Each attempt takes its own permit and gets its own timeout, whose deadline
// gRPC sends to the server (grpc-timeout). The call's own context bounds every layer: a
// wait for a permit or a bulkhead slot ends when it does, and a retry's wait (its backoff
// or a server delay) that would end after the call's deadline is not waited at all: the
// last attempt's status is returned at once. cfg says which codes are retried, failures
// or successes, and which methods are idempotent or exempt (its zero value is the
// default). The Client's UnaryInterceptor and StreamInterceptor go into grpc.NewClient:
//
//	cl, err := resiliencegrpc.NewClient(reg, "catalog",
//		resiliencegrpc.ClientConfig{
//			Idempotent: []string{"/shop.Catalog/"},         // may be retried
//			Exempt:     resiliencegrpc.HealthAndReflection, // through none of the policies
//		},
//		resilience.Retry(retry.MaxAttempts(3)),
//		resilience.CircuitBreaker(circuitbreaker.IgnoreOn(resiliencegrpc.ErrNotFailure, ratelimit.ErrExceeded)),
//		resilience.Timeout(time.Second))
//	if err != nil {
//		return err
//	}
//	conn, err := grpc.NewClient(target,
//		grpc.WithTransportCredentials(insecure.NewCredentials()), // or TLS credentials
//		grpc.WithChainUnaryInterceptor(cl.UnaryInterceptor()),
//		grpc.WithChainStreamInterceptor(cl.StreamInterceptor()))
//
// The client's policies guard every method of the connection, health checks included,
// but for the Exempt ones.
//
// Every status other than OK reaches the policies, and the caller, as an error that
// carries the server's status (status.Code and status.FromError read it as from the error
// gRPC returned; its text names the method) and says what the client made of it: a retry
// retries the RetryCodes of idempotent methods, waiting the server's delay where it sent
// one (its RetryInfo, or the grpc-retry-pushback-ms trailer of a unary call) instead of
// its own backoff, unless the delay ends after the call's deadline or exceeds
// MaxRetryDelay; a breaker counts the FailureCodes as failures and the SuccessCodes as
// successes, and, with circuitbreaker.IgnoreOn(ErrNotFailure, ratelimit.ErrExceeded),
// ignores the rest and the refusals of the client's own rate limiter. The error matches
// (errors.Is) ErrNotFailure for a code that is not a failure; ratelimit.ErrExceeded for
// ResourceExhausted with a server delay (the server's rate limiter said when to come
// back), unless the client counts ResourceExhausted as a failure; context.DeadlineExceeded
// for DeadlineExceeded and context.Canceled for Canceled.
//
// A call that the client's own policies refuse ends with an error that carries the status
// Status maps the policy's error to — ResourceExhausted for its rate limiter (with
// RetryInfo) and its bulkhead, Unavailable for its open breaker, DeadlineExceeded for its
// timeout — and unwraps to the policy's error (errors.Is(err, circuitbreaker.ErrOpen)
// works on it). When the composition
// has a retry, a call refused by the client's own rate limiter was not sent: the retry
// waits for the limiter's next permit (as retry.WaitForPermit(true) says, whatever the
// retry's own setting), whatever the method, so that the refusal costs one attempt and the next attempt finds its
// permit.
//
// The stream interceptor guards the creation of a stream, up to the moment gRPC returns
// it: its messages, and the status it ends with, are the caller's. A timeout bounds the
// creation only; the stream then lives on the caller's context.
//
// gRPC's own retries and the client's retry do not add up. When the connection's service
// config gives a method a retryPolicy, gRPC retries that method's calls and streams below
// the interceptors, with its attempts and the server's grpc-retry-pushback-ms; the
// client's retry then sends each call of that method once, as for a method that is not
// idempotent: a status, or a per-attempt timeout that ended gRPC's attempts, is returned
// without a second attempt of the client's (its breaker counts the call once, its rate
// limiter takes one permit). A refusal of the client's own rate limiter, which sent
// nothing, is still waited for. The service config is the one the connection applies
// (grpc.WithDefaultServiceConfig, or the resolver's); a connection built with
// grpc.WithDisableRetry but a retryPolicy in its service config is not retried by either,
// so leave the retryPolicy out there. gRPC's transparent retries (of a call the server
// never received) happen for every method, as gRPC has them. So a call is never sent
// gRPC's attempts times the client's: one attempt of the client's policies is one call
// of gRPC's, with all its attempts, under the per-attempt timeout; every other
// idempotent method is retried by the client's retry. Use one of the two per method:
// gRPC's retryPolicy, which every gRPC client honours with the server's pushback, or the
// client's retry, which also waits for the client's own rate limiter and goes through
// its breaker on each attempt.
//
// Its errors are *policy.ConfigError: for an invalid cfg, R4C-ATR-007 for a code outside
// 1..16 or in both FailureCodes and SuccessCodes, R4C-ATR-004 for a negative
// MaxRetryDelay, R4C-REG-010 for a malformed Idempotent or Exempt name; and
// resilience.Wrap1's (the policies' R4C codes).
func NewClient(r *resilience.Registry, id string, cfg ClientConfig, specs ...resilience.Spec) (*Client, error) {
	cl := &Client{idempotent: map[string]struct{}{}, exempt: map[string]struct{}{}}
	lists := []struct {
		name string
		in   []codes.Code
		def  []codes.Code
		out  *codeSet
	}{
		{"retryCodes", cfg.RetryCodes, []codes.Code{codes.Unavailable, codes.ResourceExhausted}, &cl.retry},
		{"failureCodes", cfg.FailureCodes, []codes.Code{codes.Unavailable, codes.DeadlineExceeded, codes.Internal}, &cl.failure},
		{"successCodes", cfg.SuccessCodes, []codes.Code{codes.InvalidArgument, codes.NotFound, codes.AlreadyExists,
			codes.PermissionDenied, codes.FailedPrecondition, codes.Aborted, codes.OutOfRange, codes.Unimplemented,
			codes.Unauthenticated}, &cl.success},
	}
	for _, l := range lists {
		in := l.in
		if in == nil {
			in = l.def
		}
		for _, code := range in {
			if code < 1 || code > 16 {
				return nil, r4c.Errorf(r4c.OutOfRange, "resiliencegrpc."+l.name, strconv.Itoa(int(code)),
					"a code is a gRPC status code other than OK, 1 to 16")
			}
		}
		*l.out = setOf(in...)
	}
	if both := cl.failure & cl.success; both != 0 {
		return nil, r4c.Errorf(r4c.OutOfRange, "resiliencegrpc.successCodes", "",
			"a code cannot be both a failure and a success (%b)", uint32(both))
	}
	for _, names := range []struct {
		in  []string
		out map[string]struct{}
	}{{cfg.Idempotent, cl.idempotent}, {cfg.Exempt, cl.exempt}} {
		for _, m := range names.in {
			if !validScope(m) {
				return nil, badMethod(m)
			}
			names.out[m] = struct{}{}
		}
	}
	if cfg.PriorityMetadata != "" {
		cl.priority = strings.ToLower(cfg.PriorityMetadata)
		if !validMetadataKey(cl.priority) {
			return nil, r4c.Errorf(r4c.BadSpec, "resiliencegrpc.priorityMetadata", cfg.PriorityMetadata,
				`the priority metadata needs a key of text, such as "x-request-priority"`)
		}
	}
	var err error
	if cl.maxDelay, err = retryhint.MaxDelay("resiliencegrpc.maxRetryDelay", cfg.MaxRetryDelay); err != nil {
		return nil, err
	}
	specs = append(slices.Clip(specs), permitwait.Spec().(resilience.Spec))
	unary, err := resilience.Wrap1(r, id, cl.attemptUnary, specs...)
	if err != nil {
		return nil, err
	}
	stream, err := resilience.Wrap1(r, id, cl.attemptStream, specs...)
	if err != nil {
		return nil, err
	}
	cl.unary, cl.stream = unary, stream
	return cl, nil
}

// outcome is what an attempt returns to the policies: the stream it created, and, for a
// status the breaker counts as a success, that status, which the caller gets as the call's
// error while the policies see a success.
type outcome struct {
	cs  grpc.ClientStream
	err error
}

type unaryClientCall struct {
	method     string
	req, reply any
	cc         *grpc.ClientConn
	invoker    grpc.UnaryInvoker
	opts       []grpc.CallOption
	ctx        context.Context // the caller's
	deadline   time.Time       // the call's deadline, zero for none
	once       *sentOnce       // whether the client's retry may send the call again
}

type streamClientCall struct {
	ctx      context.Context // the caller's
	desc     *grpc.StreamDesc
	method   string
	cc       *grpc.ClientConn
	streamer grpc.Streamer
	opts     []grpc.CallOption
	created  *[]*clientStream // every stream the attempts created
	once     *sentOnce        // whether the client's retry may send the call again
}

// UnaryInterceptor returns the interceptor that sends each unary call through the
// client's policies; see NewClient. A call whose context is already done is not sent and
// takes nothing from the policies: it returns the context's error as a status (Canceled
// or DeadlineExceeded).
func (c *Client) UnaryInterceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if c.priority != "" {
			ctx = c.sendPriority(ctx)
		}
		if c.exempted(method) {
			return invoker(ctx, method, req, reply, cc, opts...)
		}
		if err := decorate.ContextErr(ctx); err != nil {
			return statusError(err)
		}
		call := unaryClientCall{method: method, req: req, reply: reply, cc: cc, invoker: invoker, opts: opts,
			ctx: ctx, once: c.onceFor(method)}
		call.deadline, _ = ctx.Deadline()
		out, err := c.unary(ctx, call)
		if err != nil {
			return callError(ctx, err)
		}
		return out.err
	}
}

// StreamInterceptor returns the interceptor that sends the creation of each stream
// through the client's policies; see NewClient.
func (c *Client) StreamInterceptor() grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		if c.priority != "" {
			ctx = c.sendPriority(ctx)
		}
		if c.exempted(method) {
			return streamer(ctx, desc, cc, method, opts...)
		}
		if err := decorate.ContextErr(ctx); err != nil {
			return nil, statusError(err)
		}
		var made []*clientStream
		out, err := c.stream(ctx, streamClientCall{ctx: ctx, desc: desc, method: method, cc: cc, streamer: streamer,
			opts: opts, created: &made, once: c.onceFor(method)})
		for _, m := range made {
			if err != nil || out.err != nil || grpc.ClientStream(m) != out.cs {
				m.cancel() // a stream a policy discarded (a timeout that ended as it was created)
			}
		}
		if err != nil {
			return nil, callError(ctx, err)
		}
		if out.err != nil {
			return nil, out.err
		}
		return out.cs, nil
	}
}

func (c *Client) attemptUnary(ctx context.Context, call unaryClientCall) (outcome, error) {
	if err := call.once.again(); err != nil {
		return outcome{}, err
	}
	var trailer metadata.MD
	opts := append(slices.Clip(call.opts), grpc.Trailer(&trailer))
	err := call.invoker(ctx, call.method, call.req, call.reply, call.cc, opts...)
	call.once.sentOn(call.cc, call.method)
	if perr, ok := call.once.ended(ctx, call.ctx); ok {
		return outcome{}, perr // whatever the call returned, a policy (a timeout) discards it
	}
	if err == nil {
		return outcome{}, nil
	}
	out, err := c.classify(err, call.method, call.deadline, trailer, call.once.repeatable)
	call.once.failed(err)
	return out, err
}

func (c *Client) attemptStream(ctx context.Context, call streamClientCall) (outcome, error) {
	if err := call.once.again(); err != nil {
		return outcome{}, err
	}
	// The stream lives on the caller's context, not on the attempt's (which a timeout ends
	// when the attempt returns); the attempt's context ending during creation cancels it.
	sctx, cancel := context.WithCancel(call.ctx)
	stop := context.AfterFunc(ctx, cancel)
	returned := false
	defer func() {
		if !returned { // the streamer panicked: the stream's context and hook go
			stop()
			cancel()
		}
	}()
	cs, err := call.streamer(sctx, call.desc, call.cc, call.method, call.opts...)
	returned = true
	call.once.sentOn(call.cc, call.method)
	stopped := stop()
	if perr, ok := call.once.ended(ctx, call.ctx); ok {
		cancel() // a policy ended the creation (a timeout): the stream, if any, is dropped
		return outcome{}, perr
	}
	if !stopped && err == nil {
		err = call.ctx.Err() // the caller's context ended as the stream was created
	}
	if err != nil {
		cancel()
		deadline, _ := call.ctx.Deadline()
		out, err := c.classify(err, call.method, deadline, nil, call.once.repeatable)
		call.once.failed(err)
		return out, err
	}
	made := &clientStream{ClientStream: cs, cancel: cancel, last: !call.desc.ServerStreams}
	*call.created = append(*call.created, made)
	return outcome{cs: made}, nil
}

// clientStream is a created stream whose context is released when it ends: at its last
// RecvMsg, on an error, or, once the stream is committed (its first message or its
// header received), however else gRPC ends it (the connection closing). Its Context is
// not asked for before then: asking commits the stream, which ends gRPC's own retries of
// it.
type clientStream struct {
	grpc.ClientStream
	cancel context.CancelFunc
	last   bool // the first message received is the last: the method does not stream its responses
	watch  sync.Once
}

// RecvMsg receives a message, and releases the stream's context once the stream has
// ended: on an error (io.EOF included), or after the only response of a method that does
// not stream its responses.
func (s *clientStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	switch {
	case err != nil || s.last:
		s.cancel()
	default:
		s.watchEnd()
	}
	return err
}

// Header returns the header the server sent; the stream is committed then.
func (s *clientStream) Header() (metadata.MD, error) {
	md, err := s.ClientStream.Header()
	if err != nil {
		s.cancel()
	} else {
		s.watchEnd()
	}
	return md, err
}

// SendMsg sends a message; an error other than io.EOF (whose status RecvMsg gives) ends
// the stream, and releases its context.
func (s *clientStream) SendMsg(m any) error {
	err := s.ClientStream.SendMsg(m)
	if err != nil && err != io.EOF {
		s.cancel()
	}
	return err
}

// watchEnd releases the stream's context when gRPC ends the stream's own, once the
// stream is committed.
func (s *clientStream) watchEnd() {
	s.watch.Do(func() { context.AfterFunc(s.ClientStream.Context(), s.cancel) })
}

// exempted reports whether method goes through none of the client's policies.
func (c *Client) exempted(method string) bool {
	if len(c.exempt) == 0 {
		return false
	}
	if _, ok := c.exempt[method]; ok {
		return true
	}
	_, ok := c.exempt[service(method)]
	return ok
}

// callError returns the error of a call that the policies ended with err: the context's
// status (Canceled, DeadlineExceeded) when the call's context ended and err says so, as
// gRPC's own calls end; else err with its status.
func callError(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
		e := &policyError{err: err}
		e.st.Store(status.FromContextError(cerr))
		return e
	}
	return statusError(err)
}
