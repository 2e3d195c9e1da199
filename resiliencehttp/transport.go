package resiliencehttp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/permitwait"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/retryhint"
	"github.com/resilience4go/resilience4go/resilience"
)

// TransportConfig says how the RoundTripper of NewTransport reads responses. Its zero
// value is the default. It is read once, when the RoundTripper is built.
type TransportConfig struct {
	// RetryStatuses lists the response statuses that are retried, each from 100 to 599
	// (else R4C-ATR-007). Default nil: 429 and 503. An empty, non-nil list retries no
	// status.
	RetryStatuses []int
	// Failure reports whether a response status is a failure for the circuit breaker.
	// Default nil: status ≥ 500. Responses that are neither retried nor failures are
	// successes. It is called concurrently and must be safe for that.
	Failure func(status int) bool
	// MaxRetryAfter is the longest Retry-After that is waited for; a response that asks
	// for longer is returned at once, not retried. A Retry-After that ends after the
	// request's context deadline is not waited for either. Default 0, which means one
	// minute. Negative fails with R4C-ATR-004.
	MaxRetryAfter time.Duration
	// MaxBufferedBody is how many bytes of a retried response's body are read at once, so
	// that its connection goes back to the pool during the wait, and so that the response
	// can still be returned, body and all, if it turns out to be the last. A longer body
	// is kept open and drained when the next attempt starts. Default 0, which means 64
	// KiB; negative buffers nothing.
	MaxBufferedBody int64
	// RetryNonIdempotent true retries the transport errors of every request. Default
	// false: only those of idempotent requests (GET, HEAD, OPTIONS, TRACE, PUT, DELETE)
	// and of requests with an Idempotency-Key or X-Idempotency-Key header, as net/http
	// does. A POST that failed in transit, or that a per-attempt timeout ended, may have
	// reached the server, and is not sent again; one answered with a retried status (429,
	// 503) was turned away, and is retried whatever the method.
	RetryNonIdempotent bool
	// PriorityHeader names the header that carries each request's priority to the server,
	// e.g. "X-Request-Priority", for a server whose middleware reads it (PriorityHeader):
	// each attempt is sent with the header set to the name of the priority its context
	// carries (policy.PriorityFrom; "critical" when none was set), unless the request sets
	// the header itself. The caller's request is not changed: the attempt's header is a
	// copy, two allocations per attempt. Default "": no header is sent. A name
	// that is not an HTTP field name is R4C-REG-010.
	PriorityHeader string
}

const (
	defaultMaxBufferedBody = 64 << 10
	maxDrain               = 256 << 10 // the most of a failed attempt's body read to reuse its connection
)

// transport is the http.RoundTripper of NewTransport.
type transport struct {
	next        http.RoundTripper
	call        func(context.Context, *exchange) (*http.Response, error)
	retry       [10]uint64 // bit s set: status s is retried
	failure     func(int) bool
	maxAfter    time.Duration
	maxBuffered int64
	anyMethod   bool
	priority    string // PriorityHeader, canonical; "" for none
}

// NewTransport returns an http.RoundTripper that sends requests through next (nil:
// http.DefaultTransport), guarded by the policies of specs, composed once by
// resilience.Wrap1 in the default order:
//
//	Retry → CircuitBreaker → RateLimiter → Timeout → Bulkhead → next
//
// (each layer as configured, and a resilience.Fallback[*http.Response], outermost, if
// given; a resilience.Order spec names another order); cfg says which statuses are
// retried and which are failures (its zero value is the default). id is the instance id
// of the policies that have no Name, so resilience.Lookup with id returns the instances
// themselves, and r.RateLimiter(id) the limiter's read-only handle. Each attempt takes
// its own permit and gets its own timeout, which bounds the round trip up to the
// response's headers, not the reading of its body. A breaker with circuitbreaker.IgnoreOn(ErrNotFailure,
// ratelimit.ErrExceeded) counts 5xx but not 4xx responses, nor the refusals of the
// transport's own rate limiter.
//
// A retry retries 429 Too Many Requests and 503 Service Unavailable (by default: see
// TransportConfig.RetryStatuses) and transport errors (of idempotent requests: see
// TransportConfig.RetryNonIdempotent), waiting what Retry-After says in place of its
// backoff (StatusError.RetryAfter). Request bodies are replayed with Request.GetBody; a
// body that cannot be replayed is sent once and not retried. The bodies of failed
// attempts are drained (at most 256 KiB, within the attempt's timeout and at most 1s)
// and closed, so that their connections can be reused.
//
// With a retry among its specs, the transport never sends an attempt before its client
// rate limiter's permit is due (without one, a refused request fails at once with the
// limiter's rejection), and spends at most one attempt on a refusal of its own limiter:
// when the limiter refuses an attempt (which counts as one), the retry waits until the
// limiter's next permit (or its own delay, if longer) before the next one, whatever the
// retry's waitForPermit setting (as retry.WaitForPermit(true) makes it, for this
// composition only). With a limiter of 1 request per second and a retry
// delay of 100ms, a request made just after another is refused once and sent 1s after
// the first, where it would otherwise be refused at 0, 100ms and 200ms and fail. Only the
// transport's own limiter counts: a rate limiter of another composition is waited on as
// any other error.
//
// Its RoundTrip returns the first successful response; when the retries end on a retried
// or failed status, that last response, as an ordinary response with its body; otherwise
// the error of the policy that stopped the request (e.g. ratelimit.ErrExceeded,
// circuitbreaker.ErrOpen, timeout.ErrTimeout) or of the last attempt. Every other
// attempt's response body is drained and closed, and the request's body is closed, as the
// RoundTripper contract asks. A request whose context is already done is not sent and
// takes nothing from the policies (no permit, no attempt, no event): RoundTrip returns
// the context's error (context.Canceled or context.DeadlineExceeded) as is. A nil
// request is an error too, never a panic. Its CloseIdleConnections, which
// http.Client.CloseIdleConnections calls, closes the idle connections of next, when next
// has that method. It is safe for concurrent use.
//
// Its errors are *policy.ConfigError: R4C-ATR-007 for a retry status outside 100..599,
// R4C-ATR-004 for a negative MaxRetryAfter, and resilience.Wrap1's (the policies' R4C
// codes).
func NewTransport(r *resilience.Registry, id string, next http.RoundTripper, cfg TransportConfig, specs ...resilience.Spec) (http.RoundTripper, error) {
	if next == nil {
		next = http.DefaultTransport
	}
	t := &transport{next: next, failure: cfg.Failure, maxBuffered: cfg.MaxBufferedBody, anyMethod: cfg.RetryNonIdempotent}
	if cfg.PriorityHeader != "" {
		if !validFieldName(cfg.PriorityHeader) {
			return nil, r4c.Errorf(r4c.BadSpec, "resiliencehttp.priorityHeader", cfg.PriorityHeader,
				"the priority header needs a field name, such as X-Request-Priority")
		}
		t.priority = http.CanonicalHeaderKey(cfg.PriorityHeader)
	}
	statuses := cfg.RetryStatuses
	if statuses == nil {
		statuses = []int{http.StatusTooManyRequests, http.StatusServiceUnavailable}
	}
	for _, s := range statuses {
		if s < 100 || s > 599 {
			return nil, r4c.Errorf(r4c.OutOfRange, "resiliencehttp.retryStatuses", strconv.Itoa(s),
				"a retried status must be an HTTP status code, 100 to 599")
		}
		t.retry[s/64] |= 1 << (s % 64)
	}
	if t.failure == nil {
		t.failure = func(status int) bool { return status >= 500 }
	}
	var err error
	if t.maxAfter, err = retryhint.MaxDelay("resiliencehttp.maxRetryAfter", cfg.MaxRetryAfter); err != nil {
		return nil, err
	}
	switch {
	case cfg.MaxBufferedBody == 0:
		t.maxBuffered = defaultMaxBufferedBody
	case cfg.MaxBufferedBody < 0:
		t.maxBuffered = 0
	}
	// The retry waits for the client limiter's next permit, so that the next attempt finds it,
	// on the limiter's refusals.
	specs = append(slices.Clip(specs), permitwait.Spec().(resilience.Spec))
	call, err := resilience.Wrap1(r, id, t.attempt, specs...)
	if err != nil {
		return nil, err
	}
	t.call = call
	return t, nil
}

// RoundTrip sends req through the transport's policies (http.RoundTripper); see
// NewTransport.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req == nil {
		return nil, errNilRequest
	}
	if err := decorate.ContextErr(req.Context()); err != nil {
		closeBody(req)
		return nil, err
	}
	ex := &exchange{t: t, req: req}
	resp, err := t.call(req.Context(), ex)
	return ex.finish(resp, err)
}

// CloseIdleConnections closes the idle connections of the wrapped RoundTripper, when it
// has that method; http.Client.CloseIdleConnections calls it.
func (t *transport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// closeBody closes the body of a request that is not sent.
func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// exchange is one RoundTrip: the request and what its attempts left behind. Attempts run
// one after another, so it needs no lock.
type exchange struct {
	t        *transport
	req      *http.Request
	bodySent bool           // req.Body was handed to the wrapped RoundTripper, which closes it
	pending  *http.Response // the last attempt's response, whose body is not yet closed
}

// attempt is one try at the request, inside the policies. ctx is the attempt's context:
// the request's, or a timeout's made from it.
func (t *transport) attempt(ctx context.Context, ex *exchange) (*http.Response, error) {
	ex.discardPending()
	if err := decorate.ContextErr(ctx); err != nil { // ended while a policy held the attempt
		return nil, err
	}
	body, err := ex.body()
	if err != nil {
		return nil, err
	}
	req := ex.req
	rctx := req.Context()
	var cancel context.CancelCauseFunc
	var stop func() bool
	// The request runs under a context of its own, so that reading a failed attempt's body
	// can be bounded (see bounded), and closing the body ends it. The attempt's own context
	// (a timeout's) bounds the round trip, but not the reading of the body, which the
	// caller does after RoundTrip has returned and the timeout has ended its context: it
	// ends the request's context only while the round trip lasts.
	rctx, cancel = context.WithCancelCause(rctx)
	if ctx != req.Context() {
		stop = context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	}
	req = req.WithContext(rctx)
	req.Body = body
	if t.priority != "" {
		t.sendPriority(req)
	}
	returned := false
	defer func() {
		if !returned { // the RoundTripper panicked: the request's context and hook go
			if stop != nil {
				stop()
			}
			cancel(nil)
		}
	}()
	resp, err := t.next.RoundTrip(req)
	returned = true
	if err == nil && resp == nil {
		err = errNoResponse
	}
	if err == nil && resp.Body == nil {
		resp.Body = http.NoBody
	}
	if stop != nil {
		if !stop() { // the attempt's context ended during the round trip: its result is void
			if resp != nil {
				discard(resp)
			}
			cancel(nil)
			if err == nil {
				err = context.Cause(ctx)
			}
			return nil, t.once(ex, err)
		}
	}
	if err != nil {
		cancel(nil)
	} else if rwc, ok := resp.Body.(io.ReadWriteCloser); ok && resp.StatusCode == http.StatusSwitchingProtocols {
		resp.Body = &upgradedBody{cancelBody{rwc, cancel}, rwc} // the body is the connection
	} else {
		resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	}
	if err != nil {
		return nil, t.once(ex, err)
	}
	ex.pending = resp
	return t.classify(ctx, ex, resp)
}

// once returns err, the error of an attempt that may have reached the server, as an
// error no retry retries when the request must not be sent twice: its body cannot be sent
// again, or its method is not idempotent (unless RetryNonIdempotent). A timeout that ended
// the attempt then fails with an error that no retry retries either.
func (t *transport) once(ex *exchange, err error) error {
	if !ex.replayable() || !t.anyMethod && !idempotent(ex.req) {
		return &noRetry{err}
	}
	return err
}

// classify turns a response the policies must see as failed into a *StatusError.
func (t *transport) classify(ctx context.Context, ex *exchange, resp *http.Response) (*http.Response, error) {
	s := resp.StatusCode
	retry := s >= 0 && s < 640 && t.retry[s/64]&(1<<(s%64)) != 0
	failure := t.failure(s)
	if !retry && !failure {
		return resp, nil
	}
	e := &StatusError{resp: resp, failure: failure}
	e.hint.Delay, e.hint.HasDelay = retryAfter(resp.Header, time.Now())
	deadline, _ := ex.req.Context().Deadline()
	e.hint.Retry = retry && e.hint.Fits(t.maxAfter, deadline) && ex.replayable()
	if e.hint.Retry {
		t.buffer(ctx, resp)
	}
	return nil, e
}

// buffer reads a retried response's body ahead, up to maxBuffered bytes. A body that fits
// is closed at once, giving its connection back, and replaced by its bytes; a longer one
// is kept open behind the bytes read.
func (t *transport) buffer(ctx context.Context, resp *http.Response) {
	if t.maxBuffered == 0 {
		return
	}
	var buf []byte
	var err error
	bounded(ctx, resp, func() { buf, err = io.ReadAll(io.LimitReader(resp.Body, t.maxBuffered+1)) })
	if err == nil && int64(len(buf)) <= t.maxBuffered {
		_ = resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(buf))
		resp.ContentLength = int64(len(buf))
		return
	}
	resp.Body = readCloser{io.MultiReader(bytes.NewReader(buf), resp.Body), resp.Body}
}

// finish turns the policies' outcome into RoundTrip's, closing what is not returned.
func (ex *exchange) finish(resp *http.Response, err error) (*http.Response, error) {
	if !ex.bodySent && ex.req.Body != nil {
		_ = ex.req.Body.Close() // every attempt was stopped before it was sent
	}
	if err == nil && resp == nil { // e.g. a fallback that returned neither
		err = errNoResponse
	}
	if err == nil {
		if resp != ex.pending { // e.g. a fallback's response
			ex.discardPending()
		}
		return resp, nil
	}
	if se, ok := err.(*StatusError); ok && se.resp == ex.pending {
		return se.resp, nil // the retries are spent: the last response is the answer
	}
	ex.discardPending()
	if nr, ok := err.(*noRetry); ok {
		err = nr.err
	}
	return nil, err
}

// body returns the request body for the next attempt: the request's own the first time,
// a fresh copy from GetBody after.
func (ex *exchange) body() (io.ReadCloser, error) {
	r := ex.req
	if r.Body == nil || r.Body == http.NoBody {
		return r.Body, nil
	}
	if !ex.bodySent {
		ex.bodySent = true
		return r.Body, nil
	}
	if r.GetBody == nil {
		return nil, &noRetry{errNotReplayable{}}
	}
	b, err := r.GetBody()
	if err != nil {
		return nil, &noRetry{err}
	}
	return b, nil
}

// replayable reports whether the request can be sent again.
func (ex *exchange) replayable() bool {
	r := ex.req
	return r.Body == nil || r.Body == http.NoBody || r.GetBody != nil || !ex.bodySent
}

func (ex *exchange) discardPending() {
	if ex.pending != nil {
		discard(ex.pending)
		ex.pending = nil
	}
}

// discard drains (up to maxDrain bytes, so that the connection can be reused) and closes
// a response body that nobody will read.
func discard(resp *http.Response) {
	bounded(context.Background(), resp, func() { _, _ = io.CopyN(io.Discard, resp.Body, maxDrain) })
	_ = resp.Body.Close()
}

// drainTimeout bounds the reading of a failed attempt's body, to buffer or to drain it: a
// server that stalls in the middle of a 429 or 503 body must not hold the call. A body not
// read by then is cut off (its connection is not reused).
const drainTimeout = time.Second

// errSlowBody ends a request whose failed-attempt body took longer than drainTimeout.
var errSlowBody = errors.New("resiliencehttp: the failed attempt's body was not read within 1s")

// errNoResponse stands for a RoundTripper (or a fallback) that broke its contract: no
// response, no error.
var errNoResponse = errors.New("resiliencehttp: the RoundTripper returned neither a response nor an error")

var errNilRequest = errors.New("resiliencehttp: nil *http.Request")

// bounded runs read, which reads resp's body, within drainTimeout and while ctx (the
// attempt's, bounded by a timeout policy) lasts: past either, the request's context is
// ended, which makes the read fail.
func bounded(ctx context.Context, resp *http.Response, read func()) {
	cb, ok := resp.Body.(*cancelBody)
	if !ok {
		read()
		return
	}
	timer := time.AfterFunc(drainTimeout, func() { cb.cancel(errSlowBody) })
	stop := context.AfterFunc(ctx, func() { cb.cancel(context.Cause(ctx)) })
	read()
	stop()
	timer.Stop()
}

// idempotent reports whether a request may be sent again after a transport error: its
// method is idempotent (RFC 9110 §9.2.2) or it carries an idempotency key.
func idempotent(r *http.Request) bool {
	switch r.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	_, key := r.Header["Idempotency-Key"]
	_, xkey := r.Header["X-Idempotency-Key"]
	return key || xkey
}

// errNotReplayable is an attempt that could not be made: the request's body was sent and
// cannot be produced again. It is not a failure of the dependency.
type errNotReplayable struct{}

func (errNotReplayable) Error() string {
	return "resiliencehttp: the request body was sent once and cannot be sent again (no GetBody)"
}

func (errNotReplayable) Is(target error) bool { return target == ErrNotFailure }

// cancelBody ends the request's context when the body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelCauseFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel(nil)
	return err
}

// upgradedBody is the connection of a 101 response, writable as the standard library
// gives it; closing it ends the request's context, as a cancelBody's does.
type upgradedBody struct {
	cancelBody
	io.Writer
}

type readCloser struct {
	io.Reader
	io.Closer
}
