package resiliencegrpc_test

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
)

// priorityProbe is a user policy that records the priority each call carries.
type priorityProbe struct {
	mu   sync.Mutex
	seen []policy.Priority
}

func (*priorityProbe) Layer() policy.Layer { return "priorityProbe" }

func (p *priorityProbe) Decorate(next policy.Call[any]) policy.Call[any] {
	return func(ctx context.Context) (any, error) {
		p.mu.Lock()
		p.seen = append(p.seen, policy.PriorityFrom(ctx))
		p.mu.Unlock()
		return next(ctx)
	}
}

func (p *priorityProbe) DecorateAsync(next policy.AsyncCall[any]) policy.AsyncCall[any] { return next }

func (p *priorityProbe) all() []policy.Priority {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]policy.Priority(nil), p.seen...)
}

// fakeStream is a server stream that only has a context.
type fakeStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *fakeStream) Context() context.Context     { return s.ctx }
func (s *fakeStream) SetTrailer(metadata.MD)       {}
func (s *fakeStream) SetHeader(metadata.MD) error  { return nil }
func (s *fakeStream) SendHeader(metadata.MD) error { return nil }

// priorities runs a unary call and a stream with incoming metadata kv through srv and
// returns the priorities their handlers saw.
func priorities(t *testing.T, srv *resiliencegrpc.Server, method string, kv ...string) (unary, stream policy.Priority) {
	t.Helper()
	ctx := peerCtx(tcpAddr("192.0.2.1:5000"), kv...)
	_, err := srv.UnaryInterceptor()(ctx, nil, &grpc.UnaryServerInfo{FullMethod: method},
		func(ctx context.Context, _ any) (any, error) {
			unary = policy.PriorityFrom(ctx)
			return nil, nil
		})
	require.NoError(t, err)
	err = srv.StreamInterceptor()(nil, &fakeStream{ctx: ctx}, &grpc.StreamServerInfo{FullMethod: method},
		func(_ any, ss grpc.ServerStream) error {
			stream = policy.PriorityFrom(ss.Context())
			return nil
		})
	require.NoError(t, err)
	return unary, stream
}

// SPEC GR-17: the metadata's priority, capped at highest, reaches the handler of a unary
// call and of a stream; an absent or unreadable value leaves the context as it was.
func TestGR17_PriorityMetadata(t *testing.T) {
	reg, _ := newRegistry(t, clock.NewManual())
	probe := &priorityProbe{}
	srv, err := resiliencegrpc.NewServer(
		resiliencegrpc.PriorityMetadata("X-Request-Priority", policy.PriorityCritical),
		resiliencegrpc.Limit(perPeer(t, clock.NewManual(), 1000), nil, unaryCall, outputCall),
		resiliencegrpc.Guard(reg, "probe", []resilience.Spec{resilience.Use[any](probe)}, unaryCall),
		resiliencegrpc.Exempt(emptyCall))
	require.NoError(t, err)
	for _, tc := range []struct {
		kv   []string
		want policy.Priority
	}{
		{nil, policy.PriorityCritical},
		{[]string{"x-request-priority", "sheddable"}, policy.PrioritySheddable},
		{[]string{"x-request-priority", "Sheddable-Plus"}, policy.PrioritySheddablePlus},
		{[]string{"x-request-priority", "1"}, policy.PrioritySheddablePlus},
		{[]string{"x-request-priority", "critical_plus"}, policy.PriorityCritical}, // capped
		{[]string{"x-request-priority", "sheddable", "x-request-priority", "critical"}, policy.PrioritySheddable},
		{[]string{"x-request-priority", "urgent"}, policy.PriorityCritical},
		{[]string{"x-request-priority", ""}, policy.PriorityCritical},
		{[]string{"x-request-priority", strings.Repeat(" ", 40) + "0"}, policy.PriorityCritical},
	} {
		for _, method := range []string{unaryCall, outputCall, emptyCall, duplexCall} { // guarded, limited, exempt, neither
			u, s := priorities(t, srv, method, tc.kv...)
			assert.Equal(t, tc.want, u, "%s %q", method, tc.kv)
			assert.Equal(t, tc.want, s, "%s %q", method, tc.kv)
		}
	}
	// The Guard's policies saw each unary call's priority, and its stream's.
	seen := probe.all()
	require.Len(t, seen, 18)
	assert.Equal(t, policy.PrioritySheddable, seen[2])
	assert.Equal(t, policy.PrioritySheddable, seen[3])

	// A priority an interceptor before set stays when the metadata names none.
	ctx := policy.WithPriority(peerCtx(tcpAddr("192.0.2.1:5000"), "x-request-priority", "urgent"), policy.PrioritySheddable)
	_, err = srv.UnaryInterceptor()(ctx, nil, &grpc.UnaryServerInfo{FullMethod: unaryCall},
		func(ctx context.Context, _ any) (any, error) {
			assert.Equal(t, policy.PrioritySheddable, policy.PriorityFrom(ctx))
			return nil, nil
		})
	require.NoError(t, err)

	all, err := resiliencegrpc.NewServer(resiliencegrpc.PriorityMetadata("x-request-priority", policy.PriorityCriticalPlus))
	require.NoError(t, err)
	u, s := priorities(t, all, unaryCall, "x-request-priority", "critical_plus")
	assert.Equal(t, policy.PriorityCriticalPlus, u)
	assert.Equal(t, policy.PriorityCriticalPlus, s)
}

// SPEC GR-17: PriorityFunc decides alone, or for the calls whose metadata names no
// priority; its priority is not capped.
func TestGR17_PriorityFunc(t *testing.T) {
	byMethod := func(_ context.Context, method string) policy.Priority {
		if method == outputCall {
			return policy.PrioritySheddable
		}
		return policy.PriorityCriticalPlus
	}
	srv, err := resiliencegrpc.NewServer(resiliencegrpc.PriorityFunc(byMethod), resiliencegrpc.PriorityFunc(nil))
	require.NoError(t, err)
	u, s := priorities(t, srv, outputCall, "x-request-priority", "critical")
	assert.Equal(t, policy.PrioritySheddable, u)
	assert.Equal(t, policy.PrioritySheddable, s)
	u, _ = priorities(t, srv, unaryCall)
	assert.Equal(t, policy.PriorityCriticalPlus, u)

	both, err := resiliencegrpc.NewServer(resiliencegrpc.PriorityFunc(byMethod),
		resiliencegrpc.PriorityMetadata("x-request-priority", policy.PriorityCritical))
	require.NoError(t, err)
	for _, tc := range []struct {
		kv   []string
		want policy.Priority
	}{
		{nil, policy.PriorityCriticalPlus},
		{[]string{"x-request-priority", "bogus"}, policy.PriorityCriticalPlus},
		{[]string{"x-request-priority", "sheddable_plus"}, policy.PrioritySheddablePlus},
		{[]string{"x-request-priority", "critical_plus"}, policy.PriorityCritical},
	} {
		u, s := priorities(t, both, unaryCall, tc.kv...)
		assert.Equal(t, tc.want, u, "%q", tc.kv)
		assert.Equal(t, tc.want, s, "%q", tc.kv)
	}

	clamped, err := resiliencegrpc.NewServer(resiliencegrpc.PriorityFunc(func(context.Context, string) policy.Priority { return -3 }))
	require.NoError(t, err)
	u, _ = priorities(t, clamped, unaryCall)
	assert.Equal(t, policy.PrioritySheddable, u)
}

// PriorityMetadata's and ClientConfig.PriorityMetadata's names, and highest, are checked.
func TestPriorityMetadata_BadConfiguration(t *testing.T) {
	reg, _ := newRegistry(t, clock.NewManual())
	for _, name := range []string{"", "x priority", "x-priority-bin", "grpc-priority", "prio:rity", "priorité"} {
		_, err := resiliencegrpc.NewServer(resiliencegrpc.PriorityMetadata(name, policy.PriorityCritical))
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce, "%q", name)
		assert.Equal(t, r4c.BadSpec, ce.Code, "%q", name)
		assert.Equal(t, "resiliencegrpc.priorityMetadata", ce.Key)
		if name == "" {
			continue // "" is the client's default: none sent
		}
		_, err = resiliencegrpc.NewClient(reg, "c", resiliencegrpc.ClientConfig{PriorityMetadata: name})
		require.ErrorAs(t, err, &ce, "%q", name)
		assert.Equal(t, r4c.BadSpec, ce.Code, "%q", name)
	}
	for _, highest := range []policy.Priority{-1, 4} {
		_, err := resiliencegrpc.NewServer(resiliencegrpc.PriorityMetadata("x-request-priority", highest))
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, r4c.OutOfRange, ce.Code)
	}
	_, err := resiliencegrpc.NewServer(resiliencegrpc.PriorityMetadata("X-Request.Priority_2", policy.PrioritySheddable))
	assert.NoError(t, err)
}

// SPEC GR-18: without the options a call costs nothing more; a call whose priority is its
// context's costs the metadata's copy; one given another priority its context too.
func TestGR18_PriorityAllocations(t *testing.T) {
	handler := func(context.Context, any) (any, error) { return nil, nil }
	info := &grpc.UnaryServerInfo{FullMethod: unaryCall}
	allocs := func(srv *resiliencegrpc.Server, kv ...string) float64 {
		unary := srv.UnaryInterceptor()
		ctx := peerCtx(tcpAddr("192.0.2.1:5000"), kv...)
		return testing.AllocsPerRun(100, func() { _, _ = unary(ctx, nil, info, handler) })
	}
	plain, err := resiliencegrpc.NewServer(resiliencegrpc.Limit(perPeer(t, clock.NewManual(), 1_000_000_000), nil))
	require.NoError(t, err)
	assert.Zero(t, allocs(plain, "x-request-priority", "sheddable"))

	srv, err := resiliencegrpc.NewServer(resiliencegrpc.Limit(perPeer(t, clock.NewManual(), 1_000_000_000), nil),
		resiliencegrpc.PriorityMetadata("x-request-priority", policy.PriorityCritical))
	require.NoError(t, err)
	assert.Zero(t, allocs(srv), "no metadata")
	assert.Equal(t, 1.0, allocs(srv, "x-request-priority", "critical"), "gRPC's copy of the values")
	assert.Equal(t, 2.0, allocs(srv, "x-request-priority", "sheddable"), "the copy and the context")

	byFunc, err := resiliencegrpc.NewServer(resiliencegrpc.PriorityFunc(func(context.Context, string) policy.Priority {
		return policy.PrioritySheddable
	}))
	require.NoError(t, err)
	assert.Equal(t, 1.0, allocs(byFunc), "the context")
	stream := byFunc.StreamInterceptor()
	ss := &fakeStream{ctx: peerCtx(tcpAddr("192.0.2.1:5000"))}
	sinfo := &grpc.StreamServerInfo{FullMethod: outputCall}
	sh := func(any, grpc.ServerStream) error { return nil }
	assert.Equal(t, 2.0, testing.AllocsPerRun(100, func() { _ = stream(nil, ss, sinfo, sh) }), "the context and the stream's wrapper")
}

// SPEC GR-18: PriorityFunc's value outside the levels is the nearest level: when that is
// the call's context's priority, the call goes on with its context, allocating nothing.
func TestGR18_PriorityFuncOutsideTheLevelsThatIsTheContexts(t *testing.T) {
	info := &grpc.UnaryServerInfo{FullMethod: unaryCall}
	for _, tc := range []struct {
		fn, ctx policy.Priority
	}{{7, policy.PriorityCriticalPlus}, {-3, policy.PrioritySheddable}, {policy.PriorityCritical, policy.PriorityCritical}} {
		srv, err := resiliencegrpc.NewServer(resiliencegrpc.PriorityFunc(func(context.Context, string) policy.Priority {
			return tc.fn
		}))
		require.NoError(t, err)
		ctx := policy.WithPriority(peerCtx(tcpAddr("192.0.2.1:5000")), tc.ctx)
		unary := srv.UnaryInterceptor()
		var seen context.Context
		_, err = unary(ctx, nil, info, func(ctx context.Context, _ any) (any, error) { seen = ctx; return nil, nil })
		require.NoError(t, err)
		assert.Equal(t, ctx, seen, "PriorityFunc %d", tc.fn)
		handler := func(context.Context, any) (any, error) { return nil, nil }
		assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = unary(ctx, nil, info, handler) }), "PriorityFunc %d", tc.fn)
	}
}

// SPEC GR-19: a client with PriorityMetadata sends its calls' priorities, which a server
// with PriorityMetadata reads, for unary calls and streams, concurrently.
func TestGR19_ClientSendsThePriority(t *testing.T) {
	reg, _ := newRegistry(t, clock.NewManual())
	probe := &priorityProbe{}
	srv, err := resiliencegrpc.NewServer(
		resiliencegrpc.PriorityMetadata("x-request-priority", policy.PriorityCriticalPlus),
		resiliencegrpc.Guard(reg, "probe", []resilience.Spec{resilience.Use[any](probe)}, unaryCall, outputCall))
	require.NoError(t, err)
	ts := startServer(t, bufnet, srv)
	cl, err := resiliencegrpc.NewClient(reg, "client", resiliencegrpc.ClientConfig{PriorityMetadata: "X-Request-Priority"})
	require.NoError(t, err)
	c := testpb.NewTestServiceClient(ts.dial(t, cl))

	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			ctx := context.Background()
			if i%4 != 2 {
				ctx = policy.WithPriority(ctx, policy.Priority(i%4))
			}
			_, err := c.UnaryCall(ctx, &testpb.SimpleRequest{})
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	counts := map[policy.Priority]int{}
	for _, p := range probe.all() {
		counts[p]++
	}
	assert.Equal(t, map[policy.Priority]int{0: 4, 1: 4, 2: 4, 3: 4}, counts)

	// The caller's own metadata wins.
	ctx := metadata.AppendToOutgoingContext(policy.WithPriority(context.Background(), policy.PriorityCriticalPlus),
		"x-request-priority", "sheddable_plus")
	_, err = c.UnaryCall(ctx, &testpb.SimpleRequest{})
	require.NoError(t, err)
	seen := probe.all()
	assert.Equal(t, policy.PrioritySheddablePlus, seen[len(seen)-1])

	// A stream carries it too.
	st, err := c.StreamingOutputCall(policy.WithPriority(context.Background(), policy.PrioritySheddable),
		&testpb.StreamingOutputCallRequest{})
	require.NoError(t, err)
	_, err = st.Recv()
	assert.ErrorIs(t, err, io.EOF)
	seen = probe.all()
	assert.Equal(t, policy.PrioritySheddable, seen[len(seen)-1])
}

// SPEC GR-19: sending the priority costs a client call metadata.AppendToOutgoingContext's
// four allocations.
func TestGR19_ClientPriorityAllocations(t *testing.T) {
	reg, _ := newRegistry(t, clock.NewManual())
	invoke := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil }
	allocs := func(id, name string) float64 {
		cl, err := resiliencegrpc.NewClient(reg, id, resiliencegrpc.ClientConfig{PriorityMetadata: name})
		require.NoError(t, err)
		unary := cl.UnaryInterceptor()
		ctx := policy.WithPriority(context.Background(), policy.PrioritySheddable)
		return testing.AllocsPerRun(100, func() { _ = unary(ctx, unaryCall, nil, nil, nil, invoke) })
	}
	assert.Equal(t, 4.0, allocs("with", "x-request-priority")-allocs("without", ""))
}

// SPEC GR-19, GR-9: sending the priority does not change what a call with a nil context
// gets: a client with PriorityMetadata ends it with the same Internal status (a nil
// context error) as one without, unary or stream, and sends nothing; it never panics.
func TestGR19_NilContextIsAnErrorWithThePriority(t *testing.T) {
	reg, _ := newRegistry(t, clock.NewManual())
	sent := 0
	invoke := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
		sent++
		return nil
	}
	stream := func(context.Context, *grpc.StreamDesc, *grpc.ClientConn, string, ...grpc.CallOption) (grpc.ClientStream, error) {
		sent++
		return nil, nil
	}
	for _, name := range []string{"", "x-request-priority"} {
		cl, err := resiliencegrpc.NewClient(reg, "client-"+name, resiliencegrpc.ClientConfig{PriorityMetadata: name})
		require.NoError(t, err)
		var nilCtx context.Context
		require.NotPanics(t, func() {
			err = cl.UnaryInterceptor()(nilCtx, unaryCall, nil, nil, nil, invoke)
		}, "unary, PriorityMetadata %q", name)
		assert.ErrorIs(t, err, policy.ErrNilContext)
		assert.Equal(t, codes.Internal, status.Code(err))
		require.NotPanics(t, func() {
			_, err = cl.StreamInterceptor()(nilCtx, &grpc.StreamDesc{ServerStreams: true}, nil, outputCall, stream)
		}, "stream, PriorityMetadata %q", name)
		assert.ErrorIs(t, err, policy.ErrNilContext)
		assert.Equal(t, codes.Internal, status.Code(err))
	}
	assert.Zero(t, sent)
}
