package resiliencegrpc_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
)

// SPEC GR-5: a call to a method that is not idempotent is sent once. With a per-attempt
// Timeout, an attempt that times out while the server runs it comes back as the
// timeout's error, which a retry retries; the next attempt is not sent, and the call ends
// with DeadlineExceeded after one run of the handler.
func TestGR5_NonIdempotentCallTimedOutIsNotSentAgain(t *testing.T) {
	clk := clock.NewManual()
	reg, _ := newRegistry(t, clk)
	cl := newClient(t, reg, resiliencegrpc.ClientConfig{}, // UnaryCall is not idempotent
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(10*time.Millisecond)), resilience.Timeout(time.Second))
	ts := startServer(t, bufnet, nil)
	c := ts.client(t, cl)
	g := ts.svc.park("UnaryCall")

	done := callUnary(c)
	var err error
wait:
	for {
		select {
		case <-g.entered: // an attempt reached the handler: let its timeout pass
			clk.Advance(time.Second)
		case err = <-done:
			break wait
		case <-time.After(waitLimit):
			t.Fatal("timed out waiting for the call")
		}
	}
	assert.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
	assert.Equal(t, 1, ts.svc.count("UnaryCall"),
		"a non-idempotent call the server received must not be sent again")
}

// SPEC GR-6: a code that is both retried and a success code (Aborted) reaches the breaker
// as an error while it is retried; it matches ErrNotFailure, so this package's
// CircuitBreaker does not count it as a failure.
func TestGR6_RetriedSuccessCodeIsNoFailure(t *testing.T) {
	reg, _ := newRegistry(t, clock.NewManual())
	cfg := resiliencegrpc.ClientConfig{Idempotent: []string{unaryCall},
		RetryCodes: []codes.Code{codes.Unavailable, codes.Aborted}} // Aborted stays a success code
	cl := newClient(t, reg, cfg, resilience.Retry(retry.MaxAttempts(2), retry.Delay(time.Millisecond)),
		resilience.CircuitBreaker(circuitbreaker.IgnoreOn(resiliencegrpc.ErrNotFailure, ratelimit.ErrExceeded), circuitbreaker.SlidingWindowSize(4), circuitbreaker.MinimumCalls(4)))
	ts := startServer(t, bufnet, nil)
	c := ts.client(t, cl)

	for range 2 {
		ts.svc.script("UnaryCall", fails(codes.Aborted), fails(codes.Aborted))
		_, err := c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
		requireStatusError(t, err, codes.Aborted)
	}
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "svc")
	require.NoError(t, err)
	snap := cb.Snapshot()
	assert.Zero(t, snap.FailedCalls, "Aborted is a success code: the breaker must not count it as a failure")
	assert.Equal(t, circuitbreaker.Closed, snap.State)
}

// trackingCtx is a caller's context that counts the cancellation hooks registered on it
// and not yet removed (context.WithCancel and context.AfterFunc register one on a parent
// that has an AfterFunc method, and remove it when the child is cancelled). A hook that
// stays registered is a child context that is never released: with a parent of a type
// that has no AfterFunc method, the standard library holds a goroutine for it instead.
type trackingCtx struct {
	done chan struct{}
	mu   sync.Mutex
	live int
}

func newTrackingCtx() *trackingCtx { return &trackingCtx{done: make(chan struct{})} }

func (c *trackingCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *trackingCtx) Done() <-chan struct{}       { return c.done }
func (c *trackingCtx) Err() error                  { return nil }
func (c *trackingCtx) Value(any) any               { return nil }

func (c *trackingCtx) AfterFunc(func()) func() bool {
	c.mu.Lock()
	c.live++
	c.mu.Unlock()
	var once sync.Once
	return func() bool {
		stopped := false
		once.Do(func() {
			c.mu.Lock()
			c.live--
			c.mu.Unlock()
			stopped = true
		})
		return stopped
	}
}

func (c *trackingCtx) hooks() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.live
}

// SPEC GR-8: a created stream's context is released when the stream ends: a
// client-streaming call ends at CloseAndRecv, whose RecvMsg returns nil, and leaves no
// hook on the caller's context, as plain gRPC leaves none.
func TestGR8_EndedStreamReleasesItsContext(t *testing.T) {
	reg, _ := newRegistry(t, clock.NewManual())
	cl := newClient(t, reg, resiliencegrpc.ClientConfig{}, resilience.Timeout(time.Second))
	ts := startServer(t, bufnet, nil)
	for _, tc := range []struct {
		name string
		cl   *resiliencegrpc.Client
	}{{"plain gRPC", nil}, {"through the interceptor", cl}} {
		t.Run(tc.name, func(t *testing.T) {
			c := ts.client(t, tc.cl)
			ctx := newTrackingCtx()
			s, err := c.StreamingInputCall(ctx)
			require.NoError(t, err)
			require.NoError(t, s.Send(&testpb.StreamingInputCallRequest{}))
			resp, err := s.CloseAndRecv()
			require.NoError(t, err)
			assert.EqualValues(t, 1, resp.GetAggregatedPayloadSize())
			assert.Zero(t, ctx.hooks(), "the finished stream's context is still registered on the caller's")
		})
	}
}

// SPEC GR-9: a call whose context ends while the retry decides on a retried status ends
// with the context's status (Canceled), as gRPC's own calls end, and still matches
// context.Canceled. The interceptor is called directly, with an invoker that cancels the
// caller's context as it fails, so that the order is exact.
func TestGR9_ContextEndedBetweenAttemptsEndsWithItsStatus(t *testing.T) {
	reg, _ := newRegistry(t, clock.NewManual())
	cl := newClient(t, reg, idempotentUnary, resilience.Retry(retry.MaxAttempts(3), retry.Delay(time.Second)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	attempts := 0
	invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
		attempts++
		cancel() // the caller gives up as the attempt fails
		return status.Error(codes.Unavailable, "try again")
	}
	err := cl.UnaryInterceptor()(ctx, unaryCall, nil, nil, nil, invoker)
	require.Error(t, err)
	assert.Equal(t, 1, attempts)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, codes.Canceled, status.Code(err), "%v", err)
}

// SPEC GR-5: a refusal by the client's own rate limiter costs one attempt; the retry then
// waits for the limiter's next permit, so that the next attempt finds it. With
// MaxAttempts(2), a refusal and then one Unavailable end the call after one run of the
// handler.
func TestGR5_OwnLimiterRefusalCostsOneAttempt(t *testing.T) {
	clk := clock.NewManual()
	reg, _ := newRegistry(t, clk)
	cl := newClient(t, reg, idempotentUnary, resilience.Retry(retry.MaxAttempts(2), retry.Delay(100*time.Millisecond)),
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)))
	ts := startServer(t, bufnet, nil)
	c := ts.client(t, cl)
	_, err := c.EmptyCall(context.Background(), &testpb.Empty{}) // takes the one permit
	require.NoError(t, err)

	ts.svc.script("UnaryCall", fails(codes.Unavailable))
	start := clk.Now()
	_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	requireStatusError(t, err, codes.Unavailable)
	assert.Equal(t, 1, ts.svc.count("UnaryCall"), "the second attempt reached the server once")
	assert.Equal(t, time.Second, clk.Now()-start, "the retry waited for the next permit, 1s")
}

// SPEC GR-12: a method in the client's Exempt list goes through none of the client's
// policies: with a client limiter of one permit per hour, EmptyCall (exempt) always
// reaches the server and takes no permit, while UnaryCall takes the one permit and is
// then refused by the client.
func TestGR12_ExemptMethodsSkipTheClientsPolicies(t *testing.T) {
	reg, _ := newRegistry(t, clock.NewManual())
	cl := newClient(t, reg, resiliencegrpc.ClientConfig{Exempt: []string{emptyCall}},
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Hour)))
	ts := startServer(t, bufnet, nil)
	c := ts.client(t, cl)
	for range 5 {
		_, err := c.EmptyCall(context.Background(), &testpb.Empty{})
		require.NoError(t, err)
	}
	assert.Equal(t, 5, ts.svc.count("EmptyCall"))
	_, err := c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	require.NoError(t, err, "the exempt calls left the permit")
	_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
	assert.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.Equal(t, 1, ts.svc.count("UnaryCall"))

	_, err = resiliencegrpc.NewClient(reg, "bad", resiliencegrpc.ClientConfig{Exempt: []string{"grpc.health.v1.Health"}})
	assert.Equal(t, r4c.BadSpec, r4c.CodeOf(err))
}
