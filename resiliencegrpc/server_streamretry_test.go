package resiliencegrpc_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
)

// drainOutput reads a server stream to its end and returns its final error.
func drainOutput(s testpb.TestService_StreamingOutputCallClient) error {
	for {
		if _, err := s.Recv(); err != nil {
			return err
		}
	}
}

// SPEC GR-8: a stream handler's error under a Guard's retry is final: the retry neither
// waits its backoff nor runs a second attempt, and the breaker counts the stream once.
func TestGR8_StreamHandlerErrorIsFinalUnderAGuardRetry(t *testing.T) {
	clk := clock.NewManual()
	reg, rec := newRegistry(t, clk)
	srv, err := resiliencegrpc.NewServer(resiliencegrpc.Guard(reg, "g", []resilience.Spec{
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(time.Hour)),
		resilience.CircuitBreaker(circuitbreaker.SlidingWindowSize(10), circuitbreaker.MinimumCalls(10)),
	}, outputCall))
	require.NoError(t, err)
	ts := startServer(t, bufnet, srv)
	ts.svc.script("StreamingOutputCall", fails(codes.Unavailable))

	s, err := ts.client(t, nil).StreamingOutputCall(context.Background(), &testpb.StreamingOutputCallRequest{})
	require.NoError(t, err)
	err = drainOutput(s)
	assert.Equal(t, codes.Unavailable, status.Code(err), "%v", err)
	assert.Equal(t, 1, ts.svc.count("StreamingOutputCall"))

	assert.Zero(t, clk.Now(), "the stream's end waited the Guard's retry backoff")
	assert.Zero(t, rec.Count(retry.EventAttempt), "a retry was announced for a stream that cannot run again")
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "g")
	require.NoError(t, err)
	assert.Equal(t, 1, cb.Snapshot().FailedCalls, "one failed stream, counted as how many failures")
}

// SPEC GR-4: a stream handler's own status reaches the client unchanged under a Guard
// with a retry and a rate limiter: no second attempt takes a permit, and no refusal
// replaces it.
func TestGR4_StreamHandlersStatusSurvivesAGuardRetry(t *testing.T) {
	clk := clock.NewManual()
	reg, _ := newRegistry(t, clk)
	srv, err := resiliencegrpc.NewServer(resiliencegrpc.Guard(reg, "g", []resilience.Spec{
		resilience.Retry(retry.MaxAttempts(2), retry.Delay(time.Millisecond)),
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Hour)),
	}, outputCall))
	require.NoError(t, err)
	ts := startServer(t, bufnet, srv)
	ts.svc.script("StreamingOutputCall", reply{err: status.Error(codes.Unavailable, "handler failed")})

	s, err := ts.client(t, nil).StreamingOutputCall(context.Background(), &testpb.StreamingOutputCallRequest{})
	require.NoError(t, err)
	err = drainOutput(s)
	assert.Equal(t, 1, ts.svc.count("StreamingOutputCall"))
	assert.Equal(t, codes.Unavailable, status.Code(err), "%v", err)
	assert.Equal(t, "handler failed", status.Convert(err).Message())
	_, hasDelay := resiliencegrpc.RetryDelay(err)
	assert.False(t, hasDelay, "a RetryInfo invites the client to send the stream again")
}

// SPEC GR-3: the key of a peer that is not an IP address (a Unix socket, bufconn) costs
// no allocation either.
func TestGR3_PeerKeyOfANonIPPeerAllocatesNothing(t *testing.T) {
	s, err := resiliencegrpc.NewServer()
	require.NoError(t, err)
	ctx := peerCtx(&net.UnixAddr{Name: "/run/app.sock", Net: "unix"})
	require.Equal(t, "/run/app.sock", s.PeerKey(ctx, unaryCall))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = s.PeerKey(ctx, unaryCall) }))
}
