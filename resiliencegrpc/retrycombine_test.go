package resiliencegrpc_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
)

// unaryCallRetryConfig gives UnaryCall, and no other method, gRPC's own retry: 2
// attempts on Unavailable.
const unaryCallRetryConfig = `{"methodConfig": [{
	"name": [{"service": "grpc.testing.TestService", "method": "UnaryCall"}],
	"retryPolicy": {"maxAttempts": 2, "initialBackoff": "0.001s", "maxBackoff": "0.001s",
		"backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE"]}}]}`

// SPEC GR-14: when the connection's service config gives a method a retryPolicy, gRPC
// retries its calls and the client's retry does not: a call the server keeps failing is
// sent as many times as gRPC's maxAttempts (2), not that times the client's attempts (3),
// and the breaker counts it once. A method without a retryPolicy keeps the client's
// retry.
func TestGR14_ClientRetryLeavesGRPCRetriedMethodsToGRPC(t *testing.T) {
	clk := clock.NewManual()
	reg, _ := newRegistry(t, clk)
	cl := break2Client(t, reg, resiliencegrpc.ClientConfig{Idempotent: []string{wholeService}},
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(0)),
		resilience.CircuitBreaker(circuitbreaker.SlidingWindowSize(10), circuitbreaker.MinimumCalls(10)))
	ts := startServer(t, bufnet, nil)
	c := testpb.NewTestServiceClient(ts.dial(t, cl, grpc.WithDefaultServiceConfig(unaryCallRetryConfig)))
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()

	for range 10 {
		ts.svc.script("UnaryCall", fails(codes.Unavailable))
		ts.svc.script("EmptyCall", fails(codes.Unavailable))
	}
	_, err := c.UnaryCall(ctx, &testpb.SimpleRequest{})
	assert.Equal(t, codes.Unavailable, status.Code(err), "%v", err)
	assert.Equal(t, 2, ts.svc.count("UnaryCall"), "gRPC's 2 attempts, and none of the client's on top")

	_, err = c.EmptyCall(ctx, &testpb.Empty{})
	assert.Equal(t, codes.Unavailable, status.Code(err), "%v", err)
	assert.Equal(t, 3, ts.svc.count("EmptyCall"), "no retryPolicy: the client's retry, 3 attempts")

	cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "b2")
	require.NoError(t, err)
	assert.Equal(t, 1+3, cb.Snapshot().FailedCalls, "the UnaryCall once, each EmptyCall attempt")
	assert.Zero(t, clk.Now(), "no wait of the client's retry")
}

// SPEC GR-14: a method that gRPC retries is sent once by the client's policies, as one
// that is not idempotent: when a per-attempt timeout ends it, the client's retry neither
// waits nor sends it again (gRPC's attempts ran under that timeout).
func TestGR14_TimedOutGRPCRetriedCallIsNotSentAgain(t *testing.T) {
	clk := clock.NewManual()
	reg, _ := newRegistry(t, clk)
	cl := break2Client(t, reg, resiliencegrpc.ClientConfig{Idempotent: []string{wholeService}},
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(time.Second)), resilience.Timeout(time.Second))
	ts := startServer(t, bufnet, nil)
	conn := ts.dial(t, nil, grpc.WithDefaultServiceConfig(unaryCallRetryConfig))
	require.NoError(t, waitReady(conn))
	sent := 0
	err := cl.UnaryInterceptor()(context.Background(), unaryCall, &testpb.SimpleRequest{}, &testpb.SimpleResponse{},
		conn, timingOutInvoker(clk, time.Second, &sent))
	assert.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
	assert.Equal(t, 1, sent, "sent again by the client's retry after gRPC's own attempts")
	assert.Equal(t, time.Second, clk.Now(), "the client's retry waited its backoff")
}

// waitReady makes conn resolve its service config, which gRPC applies once the
// connection has resolved its target: a call that waits for it makes it so.
func waitReady(conn *grpc.ClientConn) error {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	_, err := testpb.NewTestServiceClient(conn).EmptyCall(ctx, &testpb.Empty{}, grpc.WaitForReady(true))
	return err
}
