package resiliencegrpc_test

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
)

// The full names of the test service's methods.
const (
	emptyCall    = testpb.TestService_EmptyCall_FullMethodName
	unaryCall    = testpb.TestService_UnaryCall_FullMethodName
	outputCall   = testpb.TestService_StreamingOutputCall_FullMethodName
	duplexCall   = testpb.TestService_FullDuplexCall_FullMethodName
	wholeService = "/grpc.testing.TestService/"
)

// waitLimit bounds every wait of a test on a channel: a test that would hang fails instead.
const waitLimit = 10 * time.Second

// reply is how the test service answers one call: with err (nil answers OK), after setting
// trailer, if any.
type reply struct {
	err     error
	trailer metadata.MD
}

// fails answers with a status of code.
func fails(code codes.Code) reply { return reply{err: status.Error(code, "scripted "+code.String())} }

// failsWithDelay answers with a status of code that carries a google.rpc.RetryInfo of d.
func failsWithDelay(code codes.Code, d time.Duration) reply {
	st, err := status.New(code, "scripted "+code.String()).
		WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(d)})
	if err != nil {
		panic(err)
	}
	return reply{err: st.Err()}
}

// failsWithPushback answers with a status of code and a grpc-retry-pushback-ms trailer of ms.
func failsWithPushback(code codes.Code, ms string) reply {
	r := fails(code)
	r.trailer = metadata.Pairs("grpc-retry-pushback-ms", ms)
	return r
}

// gate parks the calls of one method in the handler: each call that enters it signals
// entered, then waits until the gate is released or its context ends.
type gate struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

// open releases every call parked at the gate, and every later one.
func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

// testService is the TestService the tests call. It counts the calls that reach each
// handler, by method name ("UnaryCall"), answers them as scripted (script), parks them
// at a gate (park), and counts the messages its streaming handlers receive. Every
// handler sends its method name on started when it starts and on ended when it returns
// (see await). It is safe for concurrent use.
type testService struct {
	testpb.UnimplementedTestServiceServer

	mu      sync.Mutex
	calls   map[string]int
	replies map[string][]reply
	gates   map[string]*gate

	arrived  atomic.Int64 // unary calls that reached the server, refused or not
	streams  atomic.Int64 // streams that reached the server, refused or not
	received atomic.Int64 // messages the streaming handlers received
	deadline atomic.Int64 // the time left to the last unary call's deadline, in ns; 0: none
	started  chan string
	ended    chan string
}

func newTestService() *testService {
	return &testService{calls: map[string]int{}, replies: map[string][]reply{}, gates: map[string]*gate{},
		started: make(chan string, 1024), ended: make(chan string, 1024)}
}

// script makes the next calls to method answer with replies, in order; calls after
// them answer OK.
func (s *testService) script(method string, replies ...reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies[method] = append(s.replies[method], replies...)
}

// park makes the calls to method wait at a gate in the handler (after a streaming
// output call has sent its responses).
func (s *testService) park(method string) *gate {
	g := &gate{entered: make(chan struct{}, 1024), release: make(chan struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gates[method] = g
	return g
}

// count returns how many calls reached method's handler.
func (s *testService) count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// enter counts a call to method and returns how it is to answer.
func (s *testService) enter(method string) (reply, *gate) {
	signal(s.started, method)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[method]++
	var r reply
	if q := s.replies[method]; len(q) > 0 {
		r, s.replies[method] = q[0], q[1:]
	}
	return r, s.gates[method]
}

// wait parks at g, if any, until it opens or ctx ends.
func wait(ctx context.Context, g *gate) error {
	if g == nil {
		return nil
	}
	g.entered <- struct{}{}
	select {
	case <-g.release:
		return nil
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
}

// answer sets r's trailer, if any, with set and returns r's error.
func answer(r reply, set func(metadata.MD)) error {
	if r.trailer != nil {
		set(r.trailer)
	}
	return r.err
}

func (s *testService) done(method string) { signal(s.ended, method) }

// signal sends method on ch unless ch is full.
func signal(ch chan<- string, method string) {
	select {
	case ch <- method:
	default:
	}
}

func (s *testService) unary(ctx context.Context, method string) error {
	defer s.done(method)
	var left time.Duration
	if d, ok := ctx.Deadline(); ok {
		left = time.Until(d)
	}
	s.deadline.Store(int64(left))
	r, g := s.enter(method)
	if err := wait(ctx, g); err != nil {
		return err
	}
	return answer(r, func(md metadata.MD) { _ = grpc.SetTrailer(ctx, md) })
}

func (s *testService) EmptyCall(ctx context.Context, _ *testpb.Empty) (*testpb.Empty, error) {
	if err := s.unary(ctx, "EmptyCall"); err != nil {
		return nil, err
	}
	return &testpb.Empty{}, nil
}

func (s *testService) UnaryCall(ctx context.Context, _ *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	if err := s.unary(ctx, "UnaryCall"); err != nil {
		return nil, err
	}
	return &testpb.SimpleResponse{}, nil
}

// StreamingOutputCall sends one response per ResponseParameters of the request, then
// waits at its gate, then answers as scripted.
func (s *testService) StreamingOutputCall(req *testpb.StreamingOutputCallRequest, ss testpb.TestService_StreamingOutputCallServer) error {
	defer s.done("StreamingOutputCall")
	r, g := s.enter("StreamingOutputCall")
	for range req.GetResponseParameters() {
		if err := ss.Send(&testpb.StreamingOutputCallResponse{}); err != nil {
			return err
		}
	}
	if err := wait(ss.Context(), g); err != nil {
		return err
	}
	return answer(r, ss.SetTrailer)
}

// StreamingInputCall counts the messages it receives up to the client's end, then
// answers as scripted.
func (s *testService) StreamingInputCall(ss testpb.TestService_StreamingInputCallServer) error {
	defer s.done("StreamingInputCall")
	r, g := s.enter("StreamingInputCall")
	n := 0
	for {
		_, err := ss.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		n++
		s.received.Add(1)
	}
	if err := wait(ss.Context(), g); err != nil {
		return err
	}
	if err := answer(r, ss.SetTrailer); err != nil {
		return err
	}
	return ss.SendAndClose(&testpb.StreamingInputCallResponse{AggregatedPayloadSize: int32(n)})
}

// FullDuplexCall answers each message it receives with one response, up to the client's
// end, then answers as scripted.
func (s *testService) FullDuplexCall(ss testpb.TestService_FullDuplexCallServer) error {
	defer s.done("FullDuplexCall")
	r, g := s.enter("FullDuplexCall")
	if err := wait(ss.Context(), g); err != nil {
		return err
	}
	for {
		_, err := ss.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		s.received.Add(1)
		if err := ss.Send(&testpb.StreamingOutputCallResponse{}); err != nil {
			return err
		}
	}
	return answer(r, ss.SetTrailer)
}

// network is what a test server listens on.
type network string

const (
	bufnet network = "bufconn"
	tcp    network = "tcp" // 127.0.0.1, port chosen by the system
)

// testServer is a gRPC server serving a testService, with the interceptors of a
// resiliencegrpc.Server, stopped when the test ends.
type testServer struct {
	svc    *testService
	target string
	dialer func(context.Context, string) (net.Conn, error) // nil for TCP
}

// startServer serves a new testService on nw with srv's interceptors (nil: none), behind
// interceptors that count the calls and streams that reach the server; register
// registers more services (given the server and its testService). The server is stopped, and its Serve has returned, when the
// test ends.
func startServer(t *testing.T, nw network, srv *resiliencegrpc.Server, register ...func(*grpc.Server, *testService)) *testServer {
	t.Helper()
	svc := newTestService()
	unary := []grpc.UnaryServerInterceptor{func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		svc.arrived.Add(1)
		return h(ctx, req)
	}}
	stream := []grpc.StreamServerInterceptor{func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		svc.streams.Add(1)
		return h(srv, ss)
	}}
	if srv != nil {
		unary = append(unary, srv.UnaryInterceptor())
		stream = append(stream, srv.StreamInterceptor())
	}
	s := grpc.NewServer(grpc.ChainUnaryInterceptor(unary...), grpc.ChainStreamInterceptor(stream...))
	testpb.RegisterTestServiceServer(s, svc)
	for _, r := range register {
		r(s, svc)
	}
	ts := &testServer{svc: svc}
	var lis net.Listener
	switch nw {
	case bufnet:
		bl := bufconn.Listen(1 << 20)
		lis, ts.target = bl, "passthrough:///bufnet"
		ts.dialer = func(ctx context.Context, _ string) (net.Conn, error) { return bl.DialContext(ctx) }
	case tcp:
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		lis, ts.target = l, "passthrough:///"+l.Addr().String()
	default:
		t.Fatalf("unknown network %q", nw)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = s.Serve(lis)
	}()
	t.Cleanup(func() {
		s.Stop()
		<-served
	})
	return ts
}

// dial returns a connection to the server through cl's interceptors (nil: none), closed
// when the test ends (before the server stops).
func (ts *testServer) dial(t *testing.T, cl *resiliencegrpc.Client, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	opts = append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)
	if ts.dialer != nil {
		opts = append(opts, grpc.WithContextDialer(ts.dialer))
	}
	if cl != nil {
		opts = append(opts, grpc.WithChainUnaryInterceptor(cl.UnaryInterceptor()),
			grpc.WithChainStreamInterceptor(cl.StreamInterceptor()))
	}
	conn, err := grpc.NewClient(ts.target, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// client returns a TestService client of a new connection through cl (nil: none).
func (ts *testServer) client(t *testing.T, cl *resiliencegrpc.Client) testpb.TestServiceClient {
	t.Helper()
	return testpb.NewTestServiceClient(ts.dial(t, cl))
}

// withHealth registers a gRPC health server, serving.
func withHealth(s *grpc.Server, _ *testService) { healthpb.RegisterHealthServer(s, health.NewServer()) }

// perPeer returns a keyed limiter of permits per second per key on clk.
func perPeer(t *testing.T, clk clock.Clock, permits int, opts ...ratelimit.Option) *keyed.Limiter[string] {
	t.Helper()
	k, err := keyed.New[string](append([]ratelimit.Option{ratelimit.Permits(permits),
		ratelimit.Period(time.Second), ratelimit.WithClock(clk)}, opts...)...)
	require.NoError(t, err)
	return k
}

// keyRecorder is a KeyedLimiter that records the keys it is asked about and asks the
// limiter it wraps. It has Decide only, so a Limit cannot give its permits back.
type keyRecorder struct {
	resiliencegrpc.KeyedLimiter
	mu   sync.Mutex
	keys []string
}

func (k *keyRecorder) record(key string) {
	k.mu.Lock()
	k.keys = append(k.keys, key)
	k.mu.Unlock()
}

func (k *keyRecorder) Decide(ctx context.Context, key string) keyed.Decision {
	k.record(key)
	return k.KeyedLimiter.Decide(ctx, key)
}

// recordingLimiter is a KeyedLimiter that records the keys it is asked about.
type recordingLimiter interface {
	resiliencegrpc.KeyedLimiter
	distinct() []string
}

// distinct returns the keys asked about, each once, in the order first asked.
func (k *keyRecorder) distinct() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []string
	seen := map[string]bool{}
	for _, key := range k.keys {
		if !seen[key] {
			seen[key] = true
			out = append(out, key)
		}
	}
	return out
}

// newRegistry returns a registry on clk whose events go to the returned recorder.
func newRegistry(t *testing.T, clk clock.Clock) (*resilience.Registry, *contracttest.Recorder) {
	t.Helper()
	rec := &contracttest.Recorder{}
	r, err := resilience.NewRegistry(resilience.WithClock(clk), resilience.WithEventListener(rec.Listen))
	require.NoError(t, err)
	return r, rec
}

// callUnary makes one UnaryCall on c in a goroutine, and returns the channel its error
// comes on: for a test that holds the call in the handler meanwhile.
func callUnary(c testpb.TestServiceClient) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
		done <- err
	}()
	return done
}

// receive returns the next value of ch, failing the test if none comes within waitLimit.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// await receives from ch (a testService's started or ended) until it gets method, failing
// the test if it does not within waitLimit.
func await(t *testing.T, ch <-chan string, method string) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		select {
		case m := <-ch:
			if m == method {
				return
			}
		case <-deadline:
			t.Fatalf("timed out waiting for %s", method)
		}
	}
}

// requireRefused checks that err is a ResourceExhausted status whose RetryInfo delay is
// want.
func requireRefused(t *testing.T, err error, want time.Duration) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	d, ok := resiliencegrpc.RetryDelay(err)
	require.True(t, ok, "no RetryInfo in %v", err)
	require.Equal(t, want, d)
}
