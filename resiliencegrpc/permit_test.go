package resiliencegrpc_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
)

// parkingService parks each UnaryCall until release is closed, after telling entered.
type parkingService struct {
	testpb.UnimplementedTestServiceServer
	entered chan struct{}
	release chan struct{}
}

func (p *parkingService) UnaryCall(ctx context.Context, _ *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	p.entered <- struct{}{}
	select {
	case <-p.release:
	case <-ctx.Done():
	}
	return &testpb.SimpleResponse{}, nil
}

// serveParking starts svc behind interceptors of srv over bufconn and returns a client.
func serveParking(t *testing.T, srv *resiliencegrpc.Server, svc testpb.TestServiceServer) testpb.TestServiceClient {
	t.Helper()
	lis := bufconn.Listen(1 << 16)
	s := grpc.NewServer(grpc.ChainUnaryInterceptor(srv.UnaryInterceptor()))
	testpb.RegisterTestServiceServer(s, svc)
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = conn.Close()
		s.Stop()
		<-done
	})
	return testpb.NewTestServiceClient(conn)
}

// SPEC GR-11: a Limit counts every call it admits, also one that its Guard's bulkhead then
// turns away before the handler runs (the request reached the server): that refusal has
// no RetryInfo, and the permit stays spent.
func TestGR11_ALimitCountsCallsItsGuardTurnsAway(t *testing.T) {
	clk := clock.NewManual()
	k, err := ratelimit.NewKeyed[string](ratelimit.Permits(3), ratelimit.Period(time.Hour), ratelimit.WithClock(clk))
	require.NoError(t, err)
	reg, err := resilience.NewRegistry(resilience.WithClock(clk))
	require.NoError(t, err)
	srv, err := resiliencegrpc.NewServer(
		resiliencegrpc.Limit(k, nil),
		resiliencegrpc.Guard(reg, "unary", []resilience.Spec{resilience.Bulkhead(bulkhead.MaxConcurrent(1))}))
	require.NoError(t, err)
	svc := &parkingService{entered: make(chan struct{}, 4), release: make(chan struct{})}
	c := serveParking(t, srv, svc)

	first := make(chan error, 1)
	go func() {
		_, err := c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
		first <- err
	}()
	<-svc.entered // the first call holds the bulkhead's only slot and one of the 3 permits

	_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	_, hasDelay := resiliencegrpc.RetryDelay(err)
	assert.False(t, hasDelay, "a full bulkhead is not a rate limit: no RetryInfo")
	assert.Equal(t, 1, k.AvailablePermits("bufconn"), "the turned-away call spent its permit")
	close(svc.release)
	require.NoError(t, <-first)

	_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	require.NoError(t, err)
	_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "3 permits: 2 calls ran, 1 was turned away")
	d, ok := resiliencegrpc.RetryDelay(err)
	require.True(t, ok)
	assert.Equal(t, time.Hour/3, d, "the next permit of 3 per hour, at the burst's instant")
}
