// Command grpc guards a gRPC service and its client with package resiliencegrpc, in one
// process, over loopback TCP.
//
// The server gives each client (by IP address) 10 calls per second across its methods:
// the calls over the limit end with ResourceExhausted and a google.rpc.RetryInfo detail
// that says exactly when the next permit comes. It runs at most one Watch stream at a
// time (a bulkhead, held for the whole stream), and lets health checks through whatever
// the limit says.
//
// The client retries the idempotent methods: a call that meets Unavailable is attempted
// again after the retry's backoff, and one refused with RetryInfo after the server's
// delay. A purchase is not retried. When the server is down, its circuit breaker opens,
// and the next calls fail fast without reaching the server.
//
// Run it with:
//
//	go run ./examples/grpc
//
// Client and server share a manual clock, so the output is the same on every run.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "grpc:", err)
		os.Exit(1)
	}
}

// The service, written by hand as protoc-gen-go-grpc would generate it from
//
//	service Catalog {
//	  rpc Price(google.protobuf.StringValue) returns (google.protobuf.DoubleValue) {
//	    option idempotency_level = NO_SIDE_EFFECTS;
//	  }
//	  rpc Watch(google.protobuf.StringValue) returns (stream google.protobuf.DoubleValue);
//	  rpc Buy(google.protobuf.StringValue) returns (google.protobuf.DoubleValue);
//	}
//
// in package shop: a grpc.ServiceDesc for the server, and, for the client, calls to
// ClientConn.Invoke and ClientConn.NewStream. The interceptors see exactly what they see
// with generated code. Generated code also registers the proto file, and its
// idempotency_level, in the global registry, where resiliencegrpc finds it; without it,
// ClientConfig.Idempotent names the idempotent methods.

// catalogServer is the service's server API.
type catalogServer interface {
	// Price returns the item's price.
	Price(context.Context, *wrapperspb.StringValue) (*wrapperspb.DoubleValue, error)
	// Buy buys the item and returns the price paid.
	Buy(context.Context, *wrapperspb.StringValue) (*wrapperspb.DoubleValue, error)
	// Watch sends the item's price, then each new price, until trading ends.
	Watch(*wrapperspb.StringValue, grpc.ServerStreamingServer[wrapperspb.DoubleValue]) error
}

var catalogDesc = grpc.ServiceDesc{
	ServiceName: "shop.Catalog",
	HandlerType: (*catalogServer)(nil),
	Methods: []grpc.MethodDesc{
		{MethodName: "Price", Handler: unaryHandler("/shop.Catalog/Price", catalogServer.Price)},
		{MethodName: "Buy", Handler: unaryHandler("/shop.Catalog/Buy", catalogServer.Buy)},
	},
	Streams: []grpc.StreamDesc{{
		StreamName:    "Watch",
		ServerStreams: true,
		Handler: func(srv any, stream grpc.ServerStream) error {
			in := new(wrapperspb.StringValue)
			if err := stream.RecvMsg(in); err != nil {
				return err
			}
			return srv.(catalogServer).Watch(in, &grpc.GenericServerStream[wrapperspb.StringValue, wrapperspb.DoubleValue]{ServerStream: stream})
		},
	}},
	Metadata: "shop/catalog.proto",
}

// unaryHandler is the handler of a unary method, as generated code writes one per method.
func unaryHandler(fullMethod string, method func(catalogServer, context.Context, *wrapperspb.StringValue) (*wrapperspb.DoubleValue, error)) grpc.MethodHandler {
	return func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
		in := new(wrapperspb.StringValue)
		if err := dec(in); err != nil {
			return nil, err
		}
		handler := func(ctx context.Context, req any) (any, error) {
			return method(srv.(catalogServer), ctx, req.(*wrapperspb.StringValue))
		}
		if interceptor == nil {
			return handler(ctx, in)
		}
		return interceptor(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: fullMethod}, handler)
	}
}

// catalogClient is the service's client API, as generated code writes it.
type catalogClient struct{ cc grpc.ClientConnInterface }

func (c catalogClient) Price(ctx context.Context, item string) (float64, error) {
	out := new(wrapperspb.DoubleValue)
	err := c.cc.Invoke(ctx, "/shop.Catalog/Price", wrapperspb.String(item), out)
	return out.GetValue(), err
}

func (c catalogClient) Buy(ctx context.Context, item string) (float64, error) {
	out := new(wrapperspb.DoubleValue)
	err := c.cc.Invoke(ctx, "/shop.Catalog/Buy", wrapperspb.String(item), out)
	return out.GetValue(), err
}

func (c catalogClient) Watch(ctx context.Context, item string) (grpc.ServerStreamingClient[wrapperspb.DoubleValue], error) {
	stream, err := c.cc.NewStream(ctx, &catalogDesc.Streams[0], "/shop.Catalog/Watch")
	if err != nil {
		return nil, err
	}
	if err := stream.SendMsg(wrapperspb.String(item)); err != nil {
		return nil, err
	}
	if err := stream.CloseSend(); err != nil {
		return nil, err
	}
	return &grpc.GenericClientStream[wrapperspb.StringValue, wrapperspb.DoubleValue]{ClientStream: stream}, nil
}

// README:begin grpc-server

// newServer is the catalog's server: each client (by IP address) gets 10 calls per
// second across every method, at most one Watch stream runs at a time, and health checks
// are exempt. opts go first into grpc.NewServer.
func newServer(clk clock.Clock, cat catalogServer, opts ...grpc.ServerOption) (*grpc.Server, error) {
	perPeer, err := keyed.New[string](
		ratelimit.Permits(10), ratelimit.Period(time.Second), // 10 calls per second per client
		ratelimit.WithClock(clk), // leave out for the system clock
	)
	if err != nil {
		return nil, err
	}
	reg, err := resilience.NewRegistry(resilience.WithClock(clk))
	if err != nil {
		return nil, err
	}
	guard, err := resiliencegrpc.NewServer(
		resiliencegrpc.Limit(perPeer, nil), // nil: keyed by peer, on every method
		resiliencegrpc.Guard(reg, "watch", []resilience.Spec{
			resilience.Bulkhead(bulkhead.MaxConcurrent(1))}, "/shop.Catalog/Watch"),
		resiliencegrpc.Exempt(resiliencegrpc.HealthAndReflection...),
	)
	if err != nil {
		return nil, err
	}
	s := grpc.NewServer(append(opts,
		grpc.ChainUnaryInterceptor(guard.UnaryInterceptor()),
		grpc.ChainStreamInterceptor(guard.StreamInterceptor()))...)
	s.RegisterService(&catalogDesc, cat)
	healthpb.RegisterHealthServer(s, health.NewServer())
	return s, nil
}

// README:end grpc-server

// README:begin grpc-client

// newClient is the catalog's client: it retries Price and Watch (not Buy) on Unavailable,
// and on ResourceExhausted after the delay the server asks for, with a circuit breaker
// and a timeout per attempt. opts go last into grpc.NewClient.
func newClient(reg *resilience.Registry, target string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	guard, err := resiliencegrpc.NewClient(reg, "catalog",
		resiliencegrpc.ClientConfig{
			Idempotent: []string{"/shop.Catalog/Price", "/shop.Catalog/Watch"}, // only these are retried
		},
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(50*time.Millisecond)),
		resilience.CircuitBreaker(circuitbreaker.IgnoreOn(resiliencegrpc.ErrNotFailure, ratelimit.ErrExceeded), circuitbreaker.SlidingWindowSize(10), circuitbreaker.MinimumCalls(5),
			circuitbreaker.WaitInOpen(30*time.Second)),
		resilience.Timeout(2*time.Second), // per attempt, sent to the server as the call's deadline
	)
	if err != nil {
		return nil, err
	}
	return grpc.NewClient(target, append([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(guard.UnaryInterceptor()),
		grpc.WithChainStreamInterceptor(guard.StreamInterceptor()),
	}, opts...)...)
}

// README:end grpc-client

// The catalog's moods.
const (
	normal int32 = iota
	flaky        // the next Price or Buy call fails with Unavailable
	down         // every Price or Buy call fails with Internal
)

// catalog is the service. Watch streams get the new prices from the channel of the day,
// closed when trading ends.
type catalog struct {
	mood     atomic.Int32
	arrived  atomic.Int64 // calls that reached the server, before its policies
	deadline atomic.Bool  // set false by a Price call without a deadline, or with one over 2s away
	mu       sync.Mutex
	prices   map[string]float64
	day      chan float64
}

func newCatalog() *catalog {
	return &catalog{prices: map[string]float64{"widget": 9.99}, day: make(chan float64, 1)}
}

func (c *catalog) Price(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.DoubleValue, error) {
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > 2*time.Second {
		c.deadline.Store(false)
	}
	if c.mood.CompareAndSwap(flaky, normal) {
		return nil, status.Error(codes.Unavailable, "try again")
	}
	if c.mood.Load() == down {
		return nil, status.Error(codes.Internal, "database unreachable")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.prices[in.GetValue()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "no item %q", in.GetValue())
	}
	return wrapperspb.Double(p), nil
}

func (c *catalog) Buy(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.DoubleValue, error) {
	if c.mood.CompareAndSwap(flaky, normal) {
		return nil, status.Error(codes.Unavailable, "try again")
	}
	return c.Price(ctx, in)
}

func (c *catalog) Watch(in *wrapperspb.StringValue, stream grpc.ServerStreamingServer[wrapperspb.DoubleValue]) error {
	c.mu.Lock()
	p, day := c.prices[in.GetValue()], c.day
	c.mu.Unlock()
	if err := stream.Send(wrapperspb.Double(p)); err != nil {
		return err
	}
	for {
		select {
		case p, open := <-day:
			if !open {
				return nil // trading has ended
			}
			if err := stream.Send(wrapperspb.Double(p)); err != nil {
				return err
			}
		case <-stream.Context().Done():
			return status.FromContextError(stream.Context().Err()).Err()
		}
	}
}

// reprice sets the item's price, which the Watch stream running (one at most) receives.
func (c *catalog) reprice(item string, p float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.prices[item] = p
	c.day <- p
}

// endOfDay ends the Watch streams running.
func (c *catalog) endOfDay() {
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.day)
	c.day = make(chan float64, 1)
}

// count is the server's outermost interceptor: it counts the calls that reach the server.
func (c *catalog) count() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			c.arrived.Add(1)
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			c.arrived.Add(1)
			return h(srv, ss)
		}),
	}
}

// attempts is the client's innermost interceptor: it records each attempt the client's
// policies make, with the clock's time.
type attempts struct {
	clk   clock.Clock
	mu    sync.Mutex
	t0    time.Duration
	lines []string
}

func (a *attempts) start() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.t0, a.lines = a.clk.Now(), nil
}

func (a *attempts) print(w io.Writer, indent string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, l := range a.lines {
		fmt.Fprintf(w, "%sattempt %d %s\n", indent, i+1, l)
	}
}

func (a *attempts) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	at := a.clk.Now()
	err := invoker(ctx, method, req, reply, cc, opts...)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.lines = append(a.lines, fmt.Sprintf("at %v: %s", at-a.t0, describe(err)))
	return err
}

// describe says what a call's error is: its code, and the server's RetryInfo delay or else
// the status's message.
func describe(err error) string {
	st := status.Convert(err)
	if d, ok := resiliencegrpc.RetryDelay(err); ok {
		return fmt.Sprintf("%v, RetryInfo %v", st.Code(), d)
	}
	if st.Message() == "" {
		return st.Code().String()
	}
	return st.Code().String() + ": " + st.Message()
}

func run(ctx context.Context, w io.Writer) error {
	clk := clock.NewManual()
	cat := newCatalog()
	s, err := newServer(clk, cat, cat.count()...)
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = s.Serve(lis)
	}()
	defer func() {
		s.GracefulStop()
		<-served
	}()

	if err := serverSide(ctx, w, clk, cat, lis.Addr().String()); err != nil {
		return err
	}
	clk.Advance(time.Second) // a fresh quota
	return clientSide(ctx, w, clk, cat, lis.Addr().String())
}

// serverSide calls the server without client policies: what its own policies do.
func serverSide(ctx context.Context, w io.Writer, clk *clock.Manual, cat *catalog, target string) error {
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	shop := catalogClient{conn}

	fmt.Fprintln(w, "server: 10 calls per second per client, one Watch stream at a time, health checks exempt")
	answers := map[string]int{}
	for range 15 {
		_, err := shop.Price(ctx, "widget")
		answers[describe(err)]++
	}
	if answers["OK"]+answers["ResourceExhausted, RetryInfo 100ms"] != 15 {
		return fmt.Errorf("unexpected answers: %v", answers)
	}
	fmt.Fprintf(w, "  15 Price calls in a burst from 127.0.0.1: %d OK, %d ResourceExhausted, RetryInfo 100ms\n",
		answers["OK"], answers["ResourceExhausted, RetryInfo 100ms"])

	hc := healthpb.NewHealthClient(conn)
	serving := 0
	for range 20 {
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			return err
		}
		if resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			serving++
		}
	}
	fmt.Fprintf(w, "  20 health checks meanwhile: %d SERVING (exempt: they spend no permit)\n", serving)

	clk.Advance(30 * time.Millisecond)
	_, err = shop.Price(ctx, "widget")
	fmt.Fprintf(w, "  30ms later: %s (the time to the next permit)\n", describe(err))
	fmt.Fprintf(w, "    its message: %s\n", status.Convert(err).Message())
	clk.Advance(70 * time.Millisecond)
	p, err := shop.Price(ctx, "widget")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  70ms later: OK, %.2f (one permit every 100ms)\n", p)

	clk.Advance(time.Second)
	first, err := shop.Watch(ctx, "widget")
	if err != nil {
		return err
	}
	m, err := first.Recv()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  Watch(widget): %.2f; the stream stays open, and holds the Watch bulkhead's one slot\n", m.GetValue())
	second, err := shop.Watch(ctx, "widget")
	if err != nil {
		return err
	}
	_, err = second.Recv()
	if status.Code(err) != codes.ResourceExhausted {
		return fmt.Errorf("want the bulkhead's refusal, got %v", err)
	}
	if _, ok := resiliencegrpc.RetryDelay(err); ok {
		return errors.New("a full bulkhead sent RetryInfo")
	}
	fmt.Fprintf(w, "  a second Watch: %s (no RetryInfo: a bulkhead cannot tell when a slot frees)\n", describe(err))
	cat.reprice("widget", 10.49)
	if m, err = first.Recv(); err != nil {
		return err
	}
	cat.endOfDay()
	if _, err := first.Recv(); err != io.EOF {
		return fmt.Errorf("want the end of the stream, got %v", err)
	}
	fmt.Fprintf(w, "  the first stream receives the new price, %.2f, then ends with trading\n", m.GetValue())
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	third, err := shop.Watch(wctx, "widget")
	if err != nil {
		return err
	}
	if m, err = third.Recv(); err != nil {
		return err
	}
	fmt.Fprintf(w, "  a new Watch: %.2f (the slot is free again)\n", m.GetValue())
	cancel()
	return nil
}

// clientSide calls the server through the client's policies.
func clientSide(ctx context.Context, w io.Writer, clk *clock.Manual, cat *catalog, target string) error {
	reg, err := resilience.NewRegistry(resilience.WithClock(clk))
	if err != nil {
		return err
	}
	log := &attempts{clk: clk}
	conn, err := newClient(reg, target, grpc.WithChainUnaryInterceptor(log.unary))
	if err != nil {
		return err
	}
	defer conn.Close()
	shop := catalogClient{conn}

	fmt.Fprintln(w, "client: a retry (Price and Watch only), a circuit breaker and a timeout per attempt")
	for range 9 {
		if _, err := shop.Price(ctx, "widget"); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "  9 Price calls: OK; 1 permit of the 10 per second left")
	fmt.Fprintln(w, "  the server fails the next Price call with Unavailable:")
	cat.mood.Store(flaky)
	cat.deadline.Store(true)
	log.start()
	p, err := shop.Price(ctx, "widget")
	if err != nil {
		return err
	}
	log.print(w, "    ")
	fmt.Fprintf(w, "    OK, %.2f, after %v: the retry waited its own backoff (50ms), then the server's RetryInfo\n",
		p, clk.Now()-log.t0)
	fmt.Fprintf(w, "    the attempts that reached the handler had the client's timeout as deadline: %v\n", cat.deadline.Load())

	clk.Advance(time.Second)
	fmt.Fprintln(w, "  the server fails a Buy call with Unavailable:")
	cat.mood.Store(flaky)
	log.start()
	_, err = shop.Buy(ctx, "widget")
	if status.Code(err) != codes.Unavailable {
		return fmt.Errorf("want Unavailable, got %v", err)
	}
	log.print(w, "    ")
	fmt.Fprintln(w, "    not retried: Buy is not idempotent, and the server may have acted on it")

	clk.Advance(time.Second)
	fmt.Fprintln(w, "  the server is down, Internal every time:")
	cat.mood.Store(down)
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "catalog")
	if err != nil {
		return err
	}
	calls := 0
	for cb.Snapshot().State != circuitbreaker.Open {
		_, err = shop.Price(ctx, "widget")
		if status.Code(err) != codes.Internal {
			return fmt.Errorf("want Internal, got %v", err)
		}
		calls++
	}
	snap := cb.Snapshot()
	fmt.Fprintf(w, "    calls 1-%d: %s, not retried; the breaker's window: %d failures of %d calls\n",
		calls, describe(err), snap.FailedCalls, snap.BufferedCalls)
	before := cat.arrived.Load()
	_, err = shop.Price(ctx, "widget")
	if !errors.Is(err, circuitbreaker.ErrOpen) {
		return fmt.Errorf("want the breaker's refusal, got %v", err)
	}
	fmt.Fprintf(w, "    the breaker is %s: Price fails fast with %s (circuitbreaker.ErrOpen)\n", cb.Snapshot().State, status.Code(err))
	_, err = shop.Watch(ctx, "widget")
	if !errors.Is(err, circuitbreaker.ErrOpen) {
		return fmt.Errorf("want the breaker's refusal, got %v", err)
	}
	fmt.Fprintf(w, "    a Watch stream too, at its creation: %s\n", status.Code(err))
	fmt.Fprintf(w, "    calls that reached the server meanwhile: %d\n", cat.arrived.Load()-before)
	return nil
}
