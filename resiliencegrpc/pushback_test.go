package resiliencegrpc_test

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
)

// stockRetryConfig is a service config with nothing but gRPC's standard retryPolicy:
// ResourceExhausted is retryable, up to 3 attempts, after a 10ms backoff when the server
// sends no pushback.
const stockRetryConfig = `{"methodConfig": [{
	"name": [{"service": "grpc.testing.TestService"}],
	"retryPolicy": {"maxAttempts": 3, "initialBackoff": "0.01s", "maxBackoff": "0.01s",
		"backoffMultiplier": 1, "retryableStatusCodes": ["RESOURCE_EXHAUSTED"]}}]}`

// arrival is a call or stream that reached the server: when (real clock), and the delay
// the server's refusal asked for (hasDelay false: admitted, or refused without one).
type arrival struct {
	at       time.Time
	delay    time.Duration
	hasDelay bool
}

// arrivals records what reaches a server in front of its resiliencegrpc interceptors, and
// advances clk by the delay of each refusal, so that the key's next permit is free when
// the client comes back after it: the test measures, in real time, when it comes back.
type arrivals struct {
	clk *clock.Manual
	mu  sync.Mutex
	all []arrival
}

func (a *arrivals) record(start time.Time, err error) {
	d, ok := resiliencegrpc.RetryDelay(err)
	a.mu.Lock()
	a.all = append(a.all, arrival{at: start, delay: d, hasDelay: ok})
	a.mu.Unlock()
	if ok {
		a.clk.Advance(d)
	}
}

func (a *arrivals) list() []arrival {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]arrival(nil), a.all...)
}

// startLoopback serves a testService on a real loopback TCP port behind srv's
// interceptors, with arr recording every call and stream in front of them; it returns the
// address, and stops the server when the test ends.
func startLoopback(t *testing.T, srv *resiliencegrpc.Server, arr *arrivals) (*testService, string) {
	t.Helper()
	svc := newTestService()
	s := grpc.NewServer(
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			start := time.Now()
			resp, err := h(ctx, req)
			arr.record(start, err)
			return resp, err
		}, srv.UnaryInterceptor()),
		grpc.ChainStreamInterceptor(func(x any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			start := time.Now()
			err := h(x, ss)
			arr.record(start, err)
			return err
		}, srv.StreamInterceptor()))
	testpb.RegisterTestServiceServer(s, svc)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = s.Serve(lis)
	}()
	t.Cleanup(func() {
		s.Stop()
		<-served
	})
	return svc, lis.Addr().String()
}

// SPEC GR-13: a grpc-go client configured with nothing but the standard retryPolicy
// (ResourceExhausted retryable) retries a call that a Limit refused exactly once, after
// the delay the server asked for, read from the grpc-retry-pushback-ms trailer: for a
// unary call and for a stream, and with the client's own retry as well (GR-14: it adds no
// attempt). The server's delay is 150ms; the retry must not come back sooner in real time
// (a timer does not fire early), and comes back within generous bounds.
func TestGR13_StockGRPCRetryWaitsTheServersDelay(t *testing.T) {
	const delay = 150 * time.Millisecond
	for _, tc := range []struct {
		name   string
		stream bool
		ours   bool
	}{{"unary", false, false}, {"stream", true, false}, {"unary, with the client's retry too", false, true},
		{"stream, with the client's retry too", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewManual()
			srv, err := resiliencegrpc.NewServer(resiliencegrpc.Limit(
				perPeer(t, clk, 1, ratelimit.Period(delay)), nil))
			require.NoError(t, err)
			arr := &arrivals{clk: clk}
			svc, addr := startLoopback(t, srv, arr)
			opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
				grpc.WithDefaultServiceConfig(stockRetryConfig)}
			if tc.ours {
				reg, _ := newRegistry(t, clk)
				cl, err := resiliencegrpc.NewClient(reg, "c", resiliencegrpc.ClientConfig{Idempotent: []string{wholeService}},
					resilience.Retry(retry.MaxAttempts(3), retry.Delay(time.Millisecond)))
				require.NoError(t, err)
				opts = append(opts, grpc.WithChainUnaryInterceptor(cl.UnaryInterceptor()),
					grpc.WithChainStreamInterceptor(cl.StreamInterceptor()))
			}
			conn, err := grpc.NewClient("passthrough:///"+addr, opts...)
			require.NoError(t, err)
			t.Cleanup(func() { _ = conn.Close() })
			c := testpb.NewTestServiceClient(conn)

			call := func() error {
				ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
				defer cancel()
				if !tc.stream {
					_, err := c.UnaryCall(ctx, &testpb.SimpleRequest{})
					return err
				}
				s, err := c.StreamingOutputCall(ctx, outputRequestOf(1))
				if err != nil {
					return err
				}
				if _, err := s.Recv(); err != nil {
					return err
				}
				if _, err := s.Recv(); err != io.EOF {
					return err
				}
				return nil
			}
			require.NoError(t, call(), "the first call takes the peer's permit")
			require.NoError(t, call(), "refused, then retried once by gRPC after the server's delay")

			got := arr.list()
			require.Len(t, got, 3, "the first call, the refused one and one retry: %+v", got)
			assert.False(t, got[0].hasDelay)
			require.True(t, got[1].hasDelay, "the second call was not refused: %+v", got)
			assert.Equal(t, delay, got[1].delay)
			assert.False(t, got[2].hasDelay, "the retry was refused too: %+v", got)
			waited := got[2].at.Sub(got[1].at)
			assert.GreaterOrEqual(t, waited, delay, "gRPC retried before the server's delay")
			assert.Less(t, waited, delay+waitLimit/2)
			method := "UnaryCall"
			if tc.stream {
				method = "StreamingOutputCall"
			}
			assert.Equal(t, 2, svc.count(method), "handled: the first call and the retry")
		})
	}
}

// SPEC GR-13: every refusal of the server's policies that carries a RetryInfo carries the
// grpc-retry-pushback-ms trailer beside it, its delay rounded up to the millisecond (a
// client that waits it never comes back too early): a Limit's and a Guard's rate
// limiter's, for unary calls and streams. A refusal without a delay (a full bulkhead)
// carries none.
func TestGR13_RefusalsCarryThePushbackTrailer(t *testing.T) {
	clk := clock.NewManual()
	reg, _ := newRegistry(t, clk)
	srv, err := resiliencegrpc.NewServer(
		resiliencegrpc.Limit(perPeer(t, clk, 10), nil, unaryCall, outputCall),
		resiliencegrpc.Guard(reg, "g", []resilience.Spec{
			resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second))}, emptyCall, duplexCall))
	require.NoError(t, err)
	ts := startServer(t, bufnet, srv)
	c := ts.client(t, nil)
	ctx := context.Background()

	unary := func(call func(opts ...grpc.CallOption) error) (metadata.MD, error) {
		var md metadata.MD
		err := call(grpc.Trailer(&md))
		return md, err
	}
	limited := func(opts ...grpc.CallOption) error {
		_, err := c.UnaryCall(ctx, &testpb.SimpleRequest{}, opts...)
		return err
	}
	for range 10 {
		require.NoError(t, limited())
	}
	md, err := unary(limited)
	requireRefused(t, err, 100*time.Millisecond)
	assert.Equal(t, []string{"100"}, md.Get("grpc-retry-pushback-ms"))

	clk.Advance(30*time.Millisecond + 500*time.Microsecond) // 69.5ms to the next permit
	md, err = unary(limited)
	requireRefused(t, err, 69500*time.Microsecond)
	assert.Equal(t, []string{"70"}, md.Get("grpc-retry-pushback-ms"), "rounded up, never down")

	s, err := c.StreamingOutputCall(ctx, outputRequestOf(0))
	require.NoError(t, err)
	err = drainOutput(s)
	requireRefused(t, err, 69500*time.Microsecond)
	assert.Equal(t, []string{"70"}, s.Trailer().Get("grpc-retry-pushback-ms"), "a Limit's refused stream")

	guarded := func(opts ...grpc.CallOption) error {
		_, err := c.EmptyCall(ctx, &testpb.Empty{}, opts...)
		return err
	}
	require.NoError(t, guarded())
	md, err = unary(guarded)
	requireRefused(t, err, time.Second)
	assert.Equal(t, []string{"1000"}, md.Get("grpc-retry-pushback-ms"), "a Guard's rate limiter's refusal")

	d, err := c.FullDuplexCall(ctx)
	require.NoError(t, err)
	_, err = d.Recv()
	requireRefused(t, err, time.Second)
	assert.Equal(t, []string{"1000"}, d.Trailer().Get("grpc-retry-pushback-ms"), "a Guard's refused stream")
}

// SPEC GR-13: a handler's own refusal reaches the client as the handler returned it: the
// server adds no trailer to it.
func TestGR13_HandlersRefusalGetsNoPushback(t *testing.T) {
	srv, err := resiliencegrpc.NewServer(resiliencegrpc.Limit(perPeer(t, clock.NewManual(), 10), nil))
	require.NoError(t, err)
	ts := startServer(t, bufnet, srv)
	ts.svc.script("UnaryCall", failsWithDelay(codes.ResourceExhausted, time.Second))
	var md metadata.MD
	_, err = ts.client(t, nil).UnaryCall(context.Background(), &testpb.SimpleRequest{}, grpc.Trailer(&md))
	requireRefused(t, err, time.Second)
	assert.Equal(t, "scripted ResourceExhausted", status.Convert(err).Message())
	assert.Empty(t, md.Get("grpc-retry-pushback-ms"))
}
