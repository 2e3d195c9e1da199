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
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
)

// SPEC GR-8: a retry in a Guard never runs a stream's handler twice (the stream cannot be
// read again): the client gets the handler's own status after one run, for a server
// stream and a bidi stream alike.
func TestGR8_GuardRetryRunsAStreamHandlerOnce(t *testing.T) {
	reg, _ := newRegistry(t, clock.NewManual())
	srv, err := resiliencegrpc.NewServer(resiliencegrpc.Guard(reg, "g",
		[]resilience.Spec{resilience.Retry(retry.MaxAttempts(3), retry.Delay(time.Millisecond))}))
	require.NoError(t, err, "if NewServer refuses a Retry in a Guard, that is the fix")
	ts := startServer(t, bufnet, srv)
	c := ts.client(t, nil)
	unavailable := reply{err: status.Error(codes.Unavailable, "first run")}

	t.Run("server stream", func(t *testing.T) {
		ts.svc.script("StreamingOutputCall", unavailable)
		s, err := c.StreamingOutputCall(context.Background(), outputRequest(1))
		require.NoError(t, err)
		got := 0
		for err == nil {
			if _, err = s.Recv(); err == nil {
				got++
			}
		}
		assert.Equal(t, 1, got)
		assert.Equal(t, codes.Unavailable, status.Code(err), "the handler's status is lost: %v", err)
		assert.Equal(t, "first run", status.Convert(err).Message())
	})
	t.Run("bidi stream", func(t *testing.T) {
		ts.svc.script("FullDuplexCall", unavailable, unavailable, unavailable)
		s, err := c.FullDuplexCall(context.Background())
		require.NoError(t, err)
		require.NoError(t, s.Send(&testpb.StreamingOutputCallRequest{}))
		require.NoError(t, s.CloseSend())
		got := 0
		for err == nil {
			if _, err = s.Recv(); err == nil {
				got++
			}
		}
		assert.Equal(t, 1, got)
		assert.Equal(t, codes.Unavailable, status.Code(err), "%v", err)
		assert.Equal(t, 1, ts.svc.count("FullDuplexCall"), "the stream's handler ran more than once")
	})
}

// SPEC GR-4: a Guard takes a resilience.Fallback[any], for unary calls and streams alike;
// the fallback sees the handler's error, and what it returns is what the client gets.
func TestGR4_GuardTakesAFallback(t *testing.T) {
	reg, _ := newRegistry(t, clock.NewManual())
	srv, err := resiliencegrpc.NewServer(resiliencegrpc.Guard(reg, "fb", []resilience.Spec{
		resilience.Fallback(func(_ context.Context, err error) (any, error) {
			if status.Code(err) == codes.Unavailable {
				return nil, status.Error(codes.FailedPrecondition, "fallback: "+status.Convert(err).Message())
			}
			return nil, err
		})}))
	require.NoError(t, err)
	ts := startServer(t, bufnet, srv)
	c := ts.client(t, nil)

	ts.svc.script("UnaryCall", fails(codes.Unavailable))
	_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	assert.Equal(t, codes.FailedPrecondition, status.Code(err), "%v", err)

	ts.svc.script("StreamingOutputCall", fails(codes.Unavailable))
	s, err := c.StreamingOutputCall(context.Background(), outputRequest(1))
	require.NoError(t, err)
	for err == nil {
		_, err = s.Recv()
	}
	assert.Equal(t, codes.FailedPrecondition, status.Code(err), "%v", err)
}

// SPEC GR-1: a Limit does not wait, even on a limiter built with MaxWait: a call over the
// quota is refused at once, and the limiter publishes it as a rejection, not a wait.
func TestGR1_LimitRefusalIsPublishedAsARejection(t *testing.T) {
	clk := clock.NewManual()
	rec := &contracttest.Recorder{}
	k := perPeer(t, clk, 1, ratelimit.MaxWait(time.Second), ratelimit.OnEvent(rec.Listen))
	srv, err := resiliencegrpc.NewServer(resiliencegrpc.Limit(k, resiliencegrpc.ByMethod))
	require.NoError(t, err)
	unary := srv.UnaryInterceptor()
	info := &grpc.UnaryServerInfo{FullMethod: unaryCall}
	ok := func(context.Context, any) (any, error) { return "ok", nil }

	_, err = unary(context.Background(), nil, info, ok)
	require.NoError(t, err)
	_, err = unary(context.Background(), nil, info, ok)
	requireRefused(t, err, time.Second)
	assert.Equal(t, 1, rec.Count(ratelimit.EventRejected))
	assert.Zero(t, rec.Count(ratelimit.EventWaited), "no call waited")
}
