package resiliencegrpc

import (
	"context"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// sentOnce keeps a call to a method that is not idempotent from being sent twice: once it
// was sent, a later attempt (a retry of an error that a policy made of its failure, such
// as a timeout's) is not sent, and ends with the first attempt's error, never retried.
type sentOnce struct {
	sent bool
	err  error
}

// ended returns, for an attempt whose context a policy ended (a timeout) while the
// caller's did not, the error the policies see: the context's cause, and for a call that
// is not idempotent, that cause as an error no retry retries (the call was sent; a
// timeout outside then says so too). ok is false when no policy ended the attempt.
func (o *sentOnce) ended(attempt, caller context.Context) (err error, ok bool) {
	if attempt.Err() == nil || caller.Err() != nil {
		return nil, false
	}
	cause := context.Cause(attempt)
	if o == nil {
		return cause, true
	}
	o.err = cause
	return &notAgain{err: cause, first: true}, true
}

// failed records the error of the attempt that was sent, as the policies see it.
func (o *sentOnce) failed(err error) {
	if o != nil {
		o.err = err
	}
}

// again returns the error of a call sent already, or nil when it may be sent, which it
// then marks as sent.
func (o *sentOnce) again() error {
	if o == nil {
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

// onceFor returns the state that keeps a call to method from being sent twice, or nil
// when the method is idempotent.
func (c *Client) onceFor(method string) *sentOnce {
	if c.idempotentMethod(method) {
		return nil
	}
	return new(sentOnce)
}
