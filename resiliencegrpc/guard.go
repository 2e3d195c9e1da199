package resiliencegrpc

import (
	"context"

	"google.golang.org/grpc"

	"github.com/resilience4go/resilience4go/resilience"
)

// Guard runs the calls to methods (as for Limit; none: every method) through a
// composition of r's policies, built once by NewServer with resilience.Wrap1 under
// instance id id: e.g. resilience.Bulkhead or resilience.AdaptiveLimit to bound the calls
// a method runs at once, resilience.Timeout to bound how long a handler runs (for a
// stream, the whole stream; see StreamInterceptor). The listed methods share one composition, and so one
// bulkhead: give each method its own Guard, with its own id, to give it its own.
//
// The handler's errors reach the policies as they are (a breaker counts them, a fallback
// sees them) and the client as the handler returned them. A call that a policy refuses
// does not reach the handler: it ends with the status that Status maps the policy's error
// to (a full bulkhead and an adaptive limit's refusal are ResourceExhausted, a timeout
// DeadlineExceeded), whose message is the method and the policy's error
// ("resiliencegrpc: /pkg.Service/Method: bulkhead: bulkhead "search" is full"); one with a
// RetryInfo (a rate limiter's refusal) also carries the grpc-retry-pushback-ms trailer,
// as a Limit's refusal does. As for Limit, each call goes through one Guard at most, the most
// specific. A retry in a Guard runs a unary handler again; a stream's handler runs once
// (its stream cannot be read again), so a retry gives up after it. The composition's
// result type is any, for unary calls and streams alike, so a resilience.Fallback[any]
// fits; for a stream its value is not used, and a nil error ends the stream with OK.
// Errors of the composition (R4C codes) are NewServer's, as are R4C-REG-010 for two
// Guards of the same scope, a nil r and a malformed method name. NewServer builds the
// Guards in order: when one fails, those built before it stay in r, as any wrapped
// function's policies do. A hedge cannot guard a server call (R4C-HDG-001).
func Guard(r *resilience.Registry, id string, specs []resilience.Spec, methods ...string) ServerOption {
	return func(s *Server) {
		s.guards.add(s, &guardRule{r: r, id: id, specs: specs}, methods, r == nil)
	}
}

type guardRule struct {
	r      *resilience.Registry
	id     string
	specs  []resilience.Spec
	unary  func(context.Context, unaryCall) (any, error)
	stream func(context.Context, streamCall) (any, error)
}

// unaryCall and streamCall carry a call through a Guard's composition.
type unaryCall struct {
	req     any
	handler grpc.UnaryHandler
}

type streamCall struct {
	srv     any
	ss      grpc.ServerStream
	handler grpc.StreamHandler
	run     *streamRun
}

// streamRun is what a stream's handler left: a stream can be handled once, so a policy
// that runs the call again (a retry) gets the first run's error, never retried, instead
// of a second run on a stream that is already read.
type streamRun struct {
	done bool
	err  error
}

// handlerError marks an error that the handler returned, so that it reaches the client as
// the handler returned it, where the policies' own errors are mapped to statuses. once
// marks the error of a stream's handler: a stream is handled once, so no retry retries it
// (nor, through a timeout, the timeout's error).
type handlerError struct {
	err  error
	once bool
}

func (e *handlerError) Error() string {
	if e.err == nil {
		return "resiliencegrpc: the stream was handled already"
	}
	return e.err.Error()
}

func (e *handlerError) Unwrap() error { return e.err }

func (e *handlerError) NeverRetried() bool { return e.once }

func runUnary(ctx context.Context, c unaryCall) (any, error) {
	resp, err := c.handler(ctx, c.req)
	if err != nil {
		return resp, &handlerError{err: err}
	}
	return resp, nil
}

func runStream(ctx context.Context, c streamCall) (any, error) {
	if c.run.done {
		return nil, &handlerError{err: c.run.err, once: true}
	}
	c.run.done = true
	ss := c.ss
	if ctx != ss.Context() {
		ss = &guardedStream{ServerStream: ss, ctx: ctx}
	}
	if err := c.handler(c.srv, ss); err != nil {
		c.run.err = err
		return nil, &handlerError{err: err, once: true} // a stream cannot be handled again
	}
	return nil, nil
}

// guardedStream is a server stream whose handler runs under a policy's context (a
// timeout's): once that context has ended, RecvMsg and SendMsg fail with its status
// instead of going on. gRPC offers no way to cut short a RecvMsg or SendMsg already
// blocked: the handler sees the end at its next one, or through Context.
type guardedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *guardedStream) Context() context.Context { return s.ctx }

func (s *guardedStream) RecvMsg(m any) error {
	if err := s.ended(); err != nil {
		return err
	}
	return s.ServerStream.RecvMsg(m)
}

func (s *guardedStream) SendMsg(m any) error {
	if err := s.ended(); err != nil {
		return err
	}
	return s.ServerStream.SendMsg(m)
}

// ended returns the status error of the policy's context once it has ended (a timeout's
// is DeadlineExceeded), else nil.
func (s *guardedStream) ended() error {
	if s.ctx.Err() == nil {
		return nil
	}
	return statusError(context.Cause(s.ctx))
}

// settle returns the handler's error as it returned it, and a policy's error as an error
// carrying its status, whose message names method; refusal is true for the latter.
func settle(err error, method string) (_ error, refusal bool) {
	if err == nil {
		return nil, false
	}
	if h, ok := find[*handlerError](err); ok {
		return h.err, false
	}
	if carried(err) != nil {
		return err, true
	}
	return &policyError{err: err, method: method}, true
}
