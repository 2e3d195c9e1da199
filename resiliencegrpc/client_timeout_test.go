package resiliencegrpc_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
)

// break2Client builds a client of cfg on reg, with instance id "b2".
func break2Client(t *testing.T, reg *resilience.Registry, cfg resiliencegrpc.ClientConfig, specs ...resilience.Spec) *resiliencegrpc.Client {
	t.Helper()
	cl, err := resiliencegrpc.NewClient(reg, "b2", cfg, specs...)
	require.NoError(t, err)
	return cl
}

// timingOutInvoker is an invoker for a non-idempotent method whose server takes longer
// than the client's per-attempt timeout d: it counts its calls, moves clk past the
// attempt's deadline (its timer ends the attempt's context) and fails as gRPC fails a
// call whose context ended. Everything runs on the caller's goroutine, in a known order.
func timingOutInvoker(clk *clock.Manual, d time.Duration, sent *int) grpc.UnaryInvoker {
	return func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
		*sent++
		clk.Advance(d)
		return status.FromContextError(ctx.Err()).Err()
	}
}

// SPEC GR-5: a non-idempotent call that a per-attempt timeout ends is over: the retry
// neither waits its backoff nor makes a second attempt, and the breaker counts the call
// once.
func TestGR5_NonIdempotentTimeoutIsOneFailureAndNoWait(t *testing.T) {
	clk := clock.NewManual()
	reg, rec := newRegistry(t, clk)
	cl := break2Client(t, reg, resiliencegrpc.ClientConfig{}, // UnaryCall is not idempotent
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(time.Hour)),
		resilience.CircuitBreaker(circuitbreaker.IgnoreOn(resiliencegrpc.ErrNotFailure, ratelimit.ErrExceeded), circuitbreaker.SlidingWindowSize(10), circuitbreaker.MinimumCalls(10)),
		resilience.Timeout(time.Second))
	sent := 0
	err := cl.UnaryInterceptor()(context.Background(), unaryCall, nil, nil, nil, timingOutInvoker(clk, time.Second, &sent))

	assert.Equal(t, 1, sent)
	assert.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
	cb, cerr := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "b2")
	require.NoError(t, cerr)
	assert.Equal(t, 1, cb.Snapshot().FailedCalls, "one call that timed out, counted as how many failures")
	assert.Equal(t, time.Second, clk.Now(), "the call waited the retry's backoff after its only attempt")
	assert.Zero(t, rec.Count(retry.EventAttempt), "a retry was announced for a call that is never sent again")
}

// SPEC GR-5: a timed-out non-idempotent call ends with DeadlineExceeded, and takes no
// second permit of the client's rate limiter.
func TestGR5_NonIdempotentTimeoutEndsWithDeadlineExceeded(t *testing.T) {
	clk := clock.NewManual()
	reg, _ := newRegistry(t, clk)
	cl := break2Client(t, reg, resiliencegrpc.ClientConfig{},
		resilience.Retry(retry.MaxAttempts(2), retry.Delay(time.Millisecond)),
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(24*time.Hour)),
		resilience.Timeout(time.Second))
	sent := 0
	err := cl.UnaryInterceptor()(context.Background(), unaryCall, nil, nil, nil, timingOutInvoker(clk, time.Second, &sent))

	assert.Equal(t, 1, sent)
	assert.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
	assert.NotErrorIs(t, err, ratelimit.ErrExceeded, "the call was sent and timed out; no limiter refused it")
}

// SPEC GR-5: a non-idempotent call whose response arrives as its per-attempt timeout
// fires (the timeout discards the success) ends with the timeout's DeadlineExceeded, and
// is not sent again.
func TestGR5_NonIdempotentSuccessAtTheDeadlineIsDeadlineExceeded(t *testing.T) {
	clk := clock.NewManual()
	reg, _ := newRegistry(t, clk)
	cl := break2Client(t, reg, resiliencegrpc.ClientConfig{},
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(time.Millisecond)), resilience.Timeout(time.Second))
	sent := 0
	invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
		sent++
		clk.Advance(time.Second) // the response arrives as the deadline passes
		return nil
	}
	err := cl.UnaryInterceptor()(context.Background(), unaryCall, nil, nil, nil, invoker)

	assert.Equal(t, 1, sent)
	assert.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
}
