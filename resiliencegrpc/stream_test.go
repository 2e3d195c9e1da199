package resiliencegrpc_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
)

// outputRequest asks StreamingOutputCall for n responses.
func outputRequest(n int) *testpb.StreamingOutputCallRequest {
	return &testpb.StreamingOutputCallRequest{ResponseParameters: make([]*testpb.ResponseParameters, n)}
}

// sendIgnoringEOF sends m on s: io.EOF means the server has already ended the stream,
// whose status RecvMsg then returns.
func sendIgnoringEOF(t *testing.T, s grpc.ClientStream, m any) {
	t.Helper()
	if err := s.SendMsg(m); err != nil && !errors.Is(err, io.EOF) {
		require.NoError(t, err)
	}
}

// exhaustedServer serves the test service behind a per-peer Limit of 1 permit per second,
// whose one permit an EmptyCall has taken.
func exhaustedServer(t *testing.T) (*testServer, *grpc.ClientConn) {
	t.Helper()
	srv, err := resiliencegrpc.NewServer(resiliencegrpc.Limit(perPeer(t, clock.NewManual(), 1), nil))
	require.NoError(t, err)
	ts := startServer(t, bufnet, srv)
	conn := ts.dial(t, nil)
	_, err = testpb.NewTestServiceClient(conn).EmptyCall(context.Background(), &testpb.Empty{})
	require.NoError(t, err)
	return ts, conn
}

// GR-1, GR-8: with the server's Limit exhausted, a server stream is refused before its
// handler runs: the client's first Recv gets ResourceExhausted with the exact RetryInfo;
// the handler never ran and sent nothing.
func TestGR8_ServerRefusesAServerStreamBeforeTheHandler(t *testing.T) {
	ts, conn := exhaustedServer(t)
	s, err := conn.NewStream(context.Background(), &testpb.TestService_ServiceDesc.Streams[0], outputCall)
	require.NoError(t, err, "creating a stream does not wait for the server")
	sendIgnoringEOF(t, s, outputRequest(3))
	require.NoError(t, s.CloseSend())

	err = s.RecvMsg(&testpb.StreamingOutputCallResponse{})
	requireRefused(t, err, time.Second)
	assert.EqualValues(t, 1, ts.svc.streams.Load(), "the stream reached the server")
	assert.Zero(t, ts.svc.count("StreamingOutputCall"))
}

// GR-1, GR-8: with the server's Limit exhausted, a client stream is refused before its
// handler runs: CloseAndRecv gets ResourceExhausted; the handler never ran and received
// no message.
func TestGR8_ServerRefusesAClientStreamBeforeTheHandler(t *testing.T) {
	ts, conn := exhaustedServer(t)
	s, err := testpb.NewTestServiceClient(conn).StreamingInputCall(context.Background())
	require.NoError(t, err)
	for range 3 {
		if err := s.Send(&testpb.StreamingInputCallRequest{}); err != nil {
			require.ErrorIs(t, err, io.EOF)
		}
	}
	_, err = s.CloseAndRecv()
	requireRefused(t, err, time.Second)
	assert.EqualValues(t, 1, ts.svc.streams.Load())
	assert.Zero(t, ts.svc.count("StreamingInputCall"))
	assert.Zero(t, ts.svc.received.Load())
}

// GR-8: a bidirectional stream is refused the same way: its first Recv gets the status.
func TestGR8_ServerRefusesABidiStreamBeforeTheHandler(t *testing.T) {
	ts, conn := exhaustedServer(t)
	s, err := testpb.NewTestServiceClient(conn).FullDuplexCall(context.Background())
	require.NoError(t, err)
	if err := s.Send(&testpb.StreamingOutputCallRequest{}); err != nil {
		require.ErrorIs(t, err, io.EOF)
	}
	_, err = s.Recv()
	requireRefused(t, err, time.Second)
	assert.Zero(t, ts.svc.count("FullDuplexCall"))
	assert.Zero(t, ts.svc.received.Load())
}

// GR-8: a Guard's bulkhead holds its slot for the whole stream: while one stream runs, a
// second is ResourceExhausted before its handler; once the first has ended, a third runs.
func TestGR8_GuardBulkheadHoldsItsSlotForTheWholeStream(t *testing.T) {
	reg, _ := newRegistry(t, clock.NewManual())
	srv, err := resiliencegrpc.NewServer(resiliencegrpc.Guard(reg, "duplex",
		[]resilience.Spec{resilience.Bulkhead(bulkhead.MaxConcurrent(1))}, duplexCall))
	require.NoError(t, err)
	ts := startServer(t, bufnet, srv)
	c := ts.client(t, nil)
	ctx := context.Background()

	s1, err := c.FullDuplexCall(ctx)
	require.NoError(t, err)
	require.NoError(t, s1.Send(&testpb.StreamingOutputCallRequest{}))
	_, err = s1.Recv()
	require.NoError(t, err, "the first stream runs")

	s2, err := c.FullDuplexCall(ctx)
	require.NoError(t, err)
	_, err = s2.Recv()
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	_, has := resiliencegrpc.RetryDelay(err)
	assert.False(t, has)
	assert.Equal(t, 1, ts.svc.count("FullDuplexCall"))

	require.NoError(t, s1.Send(&testpb.StreamingOutputCallRequest{}))
	_, err = s1.Recv()
	require.NoError(t, err, "the first stream still runs")
	require.NoError(t, s1.CloseSend())
	_, err = s1.Recv()
	require.ErrorIs(t, err, io.EOF) // the server wrote its status after the Guard gave the slot back

	s3, err := c.FullDuplexCall(ctx)
	require.NoError(t, err)
	require.NoError(t, s3.Send(&testpb.StreamingOutputCallRequest{}))
	_, err = s3.Recv()
	require.NoError(t, err)
	require.NoError(t, s3.CloseSend())
	_, err = s3.Recv()
	require.ErrorIs(t, err, io.EOF)
	assert.Equal(t, 2, ts.svc.count("FullDuplexCall"))
}

// GR-4, GR-8: a Guard's timeout runs for the whole stream: a handler that honours its
// context ends with DeadlineExceeded once the timeout has passed on the manual clock,
// after the messages it sent.
func TestGR8_GuardTimeoutEndsAStreamWhoseHandlerHonoursItsContext(t *testing.T) {
	clk := clock.NewManual()
	reg, rec := newRegistry(t, clk)
	srv, err := resiliencegrpc.NewServer(resiliencegrpc.Guard(reg, "output",
		[]resilience.Spec{resilience.Timeout(time.Second)}, outputCall))
	require.NoError(t, err)
	ts := startServer(t, bufnet, srv)
	g := ts.svc.park("StreamingOutputCall")

	s, err := ts.client(t, nil).StreamingOutputCall(context.Background(), outputRequest(2))
	require.NoError(t, err)
	for range 2 {
		_, err = s.Recv()
		require.NoError(t, err)
	}
	receive(t, g.entered, "the handler parked")
	clk.Advance(time.Second)
	_, err = s.Recv()
	assert.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
	await(t, ts.svc.ended, "StreamingOutputCall")
	assert.Equal(t, 1, rec.Count(timeout.EventExceeded))
}

// GR-8, GR-7: a client-side rate limiter that is exhausted fails NewStream itself with
// ResourceExhausted, as an *Error with the exact RetryInfo, before anything is sent: the
// server sees no stream. The unary and stream interceptors share the client's limiter.
func TestGR8_ClientLimiterRefusesNewStream(t *testing.T) {
	clk := clock.NewManual()
	reg, _ := newRegistry(t, clk)
	cl := newClient(t, reg, resiliencegrpc.ClientConfig{}, resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)))
	ts := startServer(t, bufnet, nil)
	c := ts.client(t, cl)

	_, err := c.EmptyCall(context.Background(), &testpb.Empty{})
	require.NoError(t, err)
	for _, open := range []func() error{
		func() error { _, err := c.StreamingInputCall(context.Background()); return err },
		func() error { _, err := c.StreamingOutputCall(context.Background(), outputRequest(1)); return err },
		func() error { _, err := c.FullDuplexCall(context.Background()); return err },
	} {
		err := open()
		requireRefused(t, err, time.Second)
		var re *resiliencegrpc.Error
		require.ErrorAs(t, err, &re)
		require.ErrorIs(t, err, ratelimit.ErrExceeded)
	}
	assert.Zero(t, ts.svc.streams.Load(), "the server saw no stream")

	clk.Advance(time.Second)
	s, err := c.StreamingInputCall(context.Background())
	require.NoError(t, err)
	for range 3 {
		require.NoError(t, s.Send(&testpb.StreamingInputCallRequest{}))
	}
	resp, err := s.CloseAndRecv()
	require.NoError(t, err)
	assert.EqualValues(t, 3, resp.GetAggregatedPayloadSize())
	assert.EqualValues(t, 3, ts.svc.received.Load())
}

// GR-8, GR-7: an open client breaker fails NewStream with Unavailable and ErrOpen; the
// server sees no stream.
func TestGR8_OpenBreakerRefusesNewStream(t *testing.T) {
	reg, _ := newRegistry(t, clock.NewManual())
	cl := newClient(t, reg, resiliencegrpc.ClientConfig{}, resilience.CircuitBreaker(circuitbreaker.IgnoreOn(resiliencegrpc.ErrNotFailure, ratelimit.ErrExceeded)))
	ts := startServer(t, bufnet, nil)
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "svc")
	require.NoError(t, err)
	_ = cb.TransitionTo(circuitbreaker.ForcedOpen)

	_, err = ts.client(t, cl).FullDuplexCall(context.Background())
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.ErrorIs(t, err, circuitbreaker.ErrOpen)
	var re *resiliencegrpc.Error
	assert.ErrorAs(t, err, &re)
	assert.Zero(t, ts.svc.streams.Load())
}

// GR-8: a client Timeout bounds the creation of a stream only: the stream keeps working
// after the timeout's duration has passed on the manual clock, and no timer is left.
func TestGR8_ClientTimeoutBoundsTheCreationOnly(t *testing.T) {
	clk := clock.NewManual()
	reg, rec := newRegistry(t, clk)
	cl := newClient(t, reg, resiliencegrpc.ClientConfig{}, resilience.Timeout(time.Second))
	ts := startServer(t, bufnet, nil)

	s, err := ts.client(t, cl).FullDuplexCall(context.Background())
	require.NoError(t, err)
	assert.Zero(t, clk.PendingTasks(), "the timeout's timer stopped once the stream was created")
	require.NoError(t, s.Send(&testpb.StreamingOutputCallRequest{}))
	_, err = s.Recv()
	require.NoError(t, err)

	clk.Advance(5 * time.Second)
	for range 3 {
		require.NoError(t, s.Send(&testpb.StreamingOutputCallRequest{}))
		_, err = s.Recv()
		require.NoError(t, err, "the stream lives on the caller's context")
	}
	require.NoError(t, s.CloseSend())
	_, err = s.Recv()
	require.ErrorIs(t, err, io.EOF)
	assert.EqualValues(t, 4, ts.svc.received.Load())

	in, err := ts.client(t, cl).StreamingInputCall(context.Background())
	require.NoError(t, err)
	clk.Advance(5 * time.Second)
	for range 3 {
		require.NoError(t, in.Send(&testpb.StreamingInputCallRequest{}))
	}
	resp, err := in.CloseAndRecv()
	require.NoError(t, err, "the client stream lives on the caller's context")
	assert.EqualValues(t, 3, resp.GetAggregatedPayloadSize())
	assert.Zero(t, rec.Count(timeout.EventExceeded))
	assert.Zero(t, clk.PendingTasks())
}

// GR-8: a client Timeout bounds the creation of a stream: a creation that takes longer
// (held here by an inner interceptor) ends with DeadlineExceeded, an *Error matching
// timeout.ErrTimeout, whether the creation honours its context (then no stream reaches
// the server) or goes on regardless (then the stream it makes is canceled).
func TestGR8_ClientTimeoutBoundsTheCreation(t *testing.T) {
	for _, honours := range []bool{true, false} {
		t.Run(map[bool]string{true: "creation honours its context", false: "creation ignores its context"}[honours], func(t *testing.T) {
			clk := clock.NewManual()
			reg, rec := newRegistry(t, clk)
			cl := newClient(t, reg, resiliencegrpc.ClientConfig{}, resilience.Timeout(time.Second))
			ts := startServer(t, bufnet, nil)
			entered, release := make(chan struct{}, 1), make(chan struct{})
			made := make(chan grpc.ClientStream, 1)
			slow := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
				entered <- struct{}{}
				if honours {
					select {
					case <-release:
					case <-ctx.Done():
						return nil, status.FromContextError(ctx.Err()).Err()
					}
				} else {
					<-release
				}
				cs, err := streamer(ctx, desc, cc, method, opts...)
				if err == nil {
					made <- cs
				}
				return cs, err
			}
			conn := ts.dial(t, nil, grpc.WithChainStreamInterceptor(cl.StreamInterceptor(), slow))
			c := testpb.NewTestServiceClient(conn)

			res := make(chan error, 1)
			go func() {
				_, err := c.FullDuplexCall(context.Background())
				res <- err
			}()
			receive(t, entered, "the creation")
			clk.Advance(time.Second)
			if !honours {
				close(release)
			}
			err := receive(t, res, "NewStream's end")
			assert.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
			var re *resiliencegrpc.Error
			assert.ErrorAs(t, err, &re)
			assert.ErrorIs(t, err, timeout.ErrTimeout)
			assert.Equal(t, 1, rec.Count(timeout.EventExceeded))
			if honours {
				assert.Zero(t, ts.svc.streams.Load())
			}
			select {
			case cs := <-made: // a late creation may or may not reach the server
				assert.Error(t, cs.Context().Err(), "the stream made too late is canceled")
			default:
			}
		})
	}
}

// GR-8: the status a stream ends with is the caller's, not the policies': a server
// stream that ends with Unavailable is neither retried nor counted as a failure by the
// breaker (its creation succeeded).
func TestGR8_StreamStatusIsNotRetriedNorCounted(t *testing.T) {
	reg, rec := newRegistry(t, clock.NewManual())
	cl := newClient(t, reg, resiliencegrpc.ClientConfig{Idempotent: []string{wholeService}},
		resilience.Retry(retry.MaxAttempts(3)),
		resilience.CircuitBreaker(circuitbreaker.IgnoreOn(resiliencegrpc.ErrNotFailure, ratelimit.ErrExceeded), circuitbreaker.SlidingWindowSize(2), circuitbreaker.MinimumCalls(2)))
	ts := startServer(t, bufnet, nil)
	c := ts.client(t, cl)

	for range 3 {
		ts.svc.script("StreamingOutputCall", fails(codes.Unavailable))
		s, err := c.StreamingOutputCall(context.Background(), outputRequest(1))
		require.NoError(t, err)
		_, err = s.Recv()
		require.NoError(t, err)
		_, err = s.Recv()
		assert.Equal(t, codes.Unavailable, status.Code(err))
	}
	assert.Equal(t, 3, ts.svc.count("StreamingOutputCall"))
	assert.Zero(t, rec.Count(retry.EventAttempt))
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "svc")
	require.NoError(t, err)
	assert.Equal(t, circuitbreaker.Closed, cb.Snapshot().State)
	assert.Zero(t, cb.Snapshot().FailedCalls)
}

// GR-8: a caller that cancels its context in the middle of a stream ends the stream
// (Canceled) and the server's handler returns, for each kind of stream, through client
// and server interceptors; the goroutines they leave are checked by TestMain.
func TestGR8_CancelingMidStreamEndsTheHandler(t *testing.T) {
	clk := clock.NewManual()
	reg, _ := newRegistry(t, clk)
	srv, err := resiliencegrpc.NewServer(
		resiliencegrpc.Limit(perPeer(t, clk, 100), nil),
		resiliencegrpc.Guard(reg, "server", []resilience.Spec{resilience.Bulkhead(bulkhead.MaxConcurrent(10)),
			resilience.Timeout(time.Hour)}))
	require.NoError(t, err)
	cl := newClient(t, reg, resiliencegrpc.ClientConfig{Idempotent: []string{wholeService}},
		resilience.Retry(retry.MaxAttempts(2)), resilience.CircuitBreaker(circuitbreaker.IgnoreOn(resiliencegrpc.ErrNotFailure, ratelimit.ErrExceeded)), resilience.Timeout(time.Second))
	ts := startServer(t, tcp, srv)
	c := ts.client(t, cl)

	t.Run("server stream", func(t *testing.T) {
		g := ts.svc.park("StreamingOutputCall")
		defer g.open()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s, err := c.StreamingOutputCall(ctx, outputRequest(1))
		require.NoError(t, err)
		_, err = s.Recv()
		require.NoError(t, err)
		receive(t, g.entered, "the handler parked")
		cancel()
		_, err = s.Recv()
		assert.Equal(t, codes.Canceled, status.Code(err))
		await(t, ts.svc.ended, "StreamingOutputCall")
	})
	t.Run("client stream", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s, err := c.StreamingInputCall(ctx)
		require.NoError(t, err)
		require.NoError(t, s.Send(&testpb.StreamingInputCallRequest{}))
		await(t, ts.svc.started, "StreamingInputCall")
		cancel()
		_, err = s.CloseAndRecv()
		assert.Equal(t, codes.Canceled, status.Code(err))
		await(t, ts.svc.ended, "StreamingInputCall")
	})
	t.Run("bidi stream", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s, err := c.FullDuplexCall(ctx)
		require.NoError(t, err)
		require.NoError(t, s.Send(&testpb.StreamingOutputCallRequest{}))
		_, err = s.Recv()
		require.NoError(t, err)
		cancel()
		_, err = s.Recv()
		assert.Equal(t, codes.Canceled, status.Code(err))
		await(t, ts.svc.ended, "FullDuplexCall")
	})
}

// GR-8: a stream the caller reads to its end, or abandons after its status, leaves
// nothing behind: many streams in a row, through a client Timeout and a server Guard.
func TestGR8_ManyStreamsLeaveNothingBehind(t *testing.T) {
	clk := clock.NewManual()
	reg, _ := newRegistry(t, clk)
	srv, err := resiliencegrpc.NewServer(resiliencegrpc.Guard(reg, "server",
		[]resilience.Spec{resilience.Bulkhead(bulkhead.MaxConcurrent(1))}))
	require.NoError(t, err)
	cl := newClient(t, reg, resiliencegrpc.ClientConfig{}, resilience.Timeout(time.Second))
	ts := startServer(t, bufnet, srv)
	c := ts.client(t, cl)

	for i := range 50 {
		s, err := c.StreamingOutputCall(context.Background(), outputRequest(i%3))
		require.NoError(t, err)
		n := 0
		for {
			_, err := s.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			n++
		}
		require.Equal(t, i%3, n)
	}
	assert.Zero(t, clk.PendingTasks())
	assert.Equal(t, 50, ts.svc.count("StreamingOutputCall"))
}

// A streamer that panics as it creates the stream leaves nothing behind: the stream's
// context, which the client derived from the caller's, is canceled (fault: it stayed,
// with its hook on the attempt's context, until the caller's context ended).
func TestClientStream_PanickingStreamerLeavesNoContextBehind(t *testing.T) {
	reg, _ := newRegistry(t, clock.NewManual())
	cl := newClient(t, reg, resiliencegrpc.ClientConfig{}, resilience.Bulkhead())
	var seen context.Context
	streamer := func(ctx context.Context, _ *grpc.StreamDesc, _ *grpc.ClientConn, _ string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
		seen = ctx
		panic("boom")
	}
	assert.PanicsWithValue(t, "boom", func() {
		_, _ = cl.StreamInterceptor()(t.Context(), &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, nil, "/svc/Method", streamer)
	})
	require.NotNil(t, seen)
	assert.ErrorIs(t, seen.Err(), context.Canceled)
	require.NoError(t, t.Context().Err(), "the caller's context is still live")
}
