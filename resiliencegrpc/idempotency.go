package resiliencegrpc

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// sentOnce keeps a call that the client's retry may not repeat from being sent twice:
// once it was sent, a later attempt (a retry of an error that a policy made of its
// failure, such as a timeout's) is not sent, and ends with the first attempt's error,
// never retried. A call may be repeated (repeatable) when its method is idempotent and
// gRPC does not retry it itself; whether gRPC does is known once the call was sent (the
// connection applies its service config when it first resolves its target), and is
// asked then (sentOn). The attempts of a call run one after the other: a sentOnce is
// not safe for concurrent use.
type sentOnce struct {
	repeatable bool
	sent       bool
	err        error
}

// sentOn records that the call was sent on cc, for method: a method that cc's service
// config gives a retryPolicy is then no longer repeatable.
func (o *sentOnce) sentOn(cc *grpc.ClientConn, method string) {
	if o.repeatable && retriedByGRPC(cc, method) {
		o.repeatable, o.sent = false, true
	}
}

// ended returns, for an attempt whose context a policy ended (a timeout) while the
// caller's did not, the error the policies see: the context's cause, and for a call that
// may not be repeated, that cause as an error no retry retries (the call was sent; a
// timeout outside then says so too). ok is false when no policy ended the attempt.
func (o *sentOnce) ended(attempt, caller context.Context) (err error, ok bool) {
	if attempt.Err() == nil || caller.Err() != nil {
		return nil, false
	}
	cause := context.Cause(attempt)
	if o.repeatable {
		return cause, true
	}
	o.err = cause
	return &notAgain{err: cause, first: true}, true
}

// failed records the error of the attempt that was sent, as the policies see it.
func (o *sentOnce) failed(err error) { o.err = err }

// again returns the error of a call sent already that may not be repeated, or nil when it
// may be sent, which it then marks as sent.
func (o *sentOnce) again() error {
	if o.repeatable {
		return nil
	}
	if o.sent {
		return &notAgain{err: o.err}
	}
	o.sent = true
	return nil
}

// notAgain is the error, never retried, of an attempt of a call that was sent once
// already: the first attempt's error, cut short by a policy (first), or, for a later
// attempt that was not sent, that attempt's error again, which is then not a failure
// (ErrNotFailure): the breaker counted the first.
type notAgain struct {
	err   error
	first bool
}

func (e *notAgain) Error() string {
	if e.err == nil {
		return "resiliencegrpc: a call to a method that is not idempotent is sent once"
	}
	return e.err.Error()
}

func (e *notAgain) Unwrap() error { return e.err }

func (e *notAgain) NeverRetried() bool { return true }

func (e *notAgain) Is(target error) bool { return target == ErrNotFailure && !e.first }

// idempotentMethod reports whether method may be retried: named in Idempotent, or marked
// idempotent in its proto definition.
func (c *Client) idempotentMethod(method string) bool {
	if _, ok := c.idempotent[method]; ok {
		return true
	}
	if _, ok := c.idempotent[service(method)]; ok {
		return true
	}
	if v, ok := c.protoIdem.Load(method); ok {
		return v.(bool)
	}
	idem := protoIdempotent(method)
	c.protoIdem.Store(method, idem)
	return idem
}

// protoIdempotent reads the idempotency_level option of method ("/pkg.Service/Method")
// from the global proto registry.
func protoIdempotent(method string) bool {
	name := strings.Replace(strings.TrimPrefix(method, "/"), "/", ".", 1)
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		return false
	}
	md, ok := d.(protoreflect.MethodDescriptor)
	if !ok {
		return false
	}
	opts, ok := md.Options().(*descriptorpb.MethodOptions)
	if !ok || opts == nil {
		return false
	}
	switch opts.GetIdempotencyLevel() {
	case descriptorpb.MethodOptions_IDEMPOTENT, descriptorpb.MethodOptions_NO_SIDE_EFFECTS:
		return true
	}
	return false
}

// onceFor returns the state that keeps a call to method from being sent twice by the
// client's retry, when it may not repeat the call: the method is not idempotent, or (as
// sentOn finds once the call was sent) gRPC retries it itself.
func (c *Client) onceFor(method string) *sentOnce {
	return &sentOnce{repeatable: c.idempotentMethod(method)}
}

// retriedByGRPC reports whether the service config of cc gives method a retryPolicy: gRPC
// then retries the method's calls itself, below the interceptors, so that each attempt
// of the client's policies is one call of gRPC's, with all its attempts.
func retriedByGRPC(cc *grpc.ClientConn, method string) bool {
	return cc != nil && cc.GetMethodConfig(method).RetryPolicy != nil
}
