// Command priorityserver gives each request to a server a priority, for the policies that
// shed load by it (a bulkhead, an adaptive limit): the HTTP middleware reads it from a
// header, the gRPC interceptors from metadata, each capped at what the server grants a
// client, and a function of the request decides for the requests that say nothing. The
// clients send their callers' priorities. The handlers here only show the priority they
// got; the output is the same on every run.
//
//	go run ./examples/priorityserver
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/test/bufconn"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
	"github.com/resilience4go/resilience4go/resiliencehttp"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "priorityserver:", err)
		os.Exit(1)
	}
}

// newHTTPService is the HTTP service: its handler answers with the priority the request
// got, where a real one would call through a bulkhead that sheds by it.
func newHTTPService() (http.Handler, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, policy.PriorityFrom(r.Context()))
	})
	perClient, err := keyed.New[string](ratelimit.Permits(100), ratelimit.Period(time.Second))
	if err != nil {
		return nil, err
	}
	// README:begin http-server
	limit, err := resiliencehttp.NewMiddleware(perClient,
		// A client may ask for any priority up to critical; critical_plus is the server's to give.
		resiliencehttp.PriorityHeader("X-Request-Priority", policy.PriorityCritical),
		// A request that names none: by what it asks for.
		resiliencehttp.PriorityFunc(func(r *http.Request) policy.Priority {
			switch {
			case strings.HasPrefix(r.URL.Path, "/batch/"):
				return policy.PrioritySheddable
			case r.URL.Path == "/checkout":
				return policy.PriorityCriticalPlus
			}
			return policy.PriorityCritical
		}),
	)
	if err != nil {
		return nil, err
	}
	return limit(mux), nil
	// README:end http-server
}

// seen is a user policy that records the priority of the calls it sees, as a bulkhead
// reads it.
type seen struct{ last atomic.Int32 }

func (*seen) Layer() policy.Layer { return "seen" }

func (s *seen) Decorate(next policy.Call[any]) policy.Call[any] {
	return func(ctx context.Context) (any, error) {
		s.last.Store(int32(policy.PriorityFrom(ctx)))
		return next(ctx)
	}
}

func (s *seen) DecorateAsync(next policy.AsyncCall[any]) policy.AsyncCall[any] { return next }

// newGRPCServer is the gRPC server, with the health service standing in for the
// service's own, guarded by a composition whose policy s records each call's priority.
func newGRPCServer(s *seen) (*grpc.Server, error) {
	reg, err := resilience.NewRegistry()
	if err != nil {
		return nil, err
	}
	// README:begin grpc-server
	guard, err := resiliencegrpc.NewServer(
		resiliencegrpc.PriorityMetadata("x-request-priority", policy.PriorityCritical),
		// The composition, e.g. a bulkhead, sees each call's priority.
		resiliencegrpc.Guard(reg, "health", []resilience.Spec{resilience.Use[any](s)}),
	)
	if err != nil {
		return nil, err
	}
	srv := grpc.NewServer(
		grpc.ChainUnaryInterceptor(guard.UnaryInterceptor()),
		grpc.ChainStreamInterceptor(guard.StreamInterceptor()))
	// README:end grpc-server
	healthpb.RegisterHealthServer(srv, health.NewServer())
	return srv, nil
}

func run(ctx context.Context, w io.Writer) error {
	svc, err := newHTTPService()
	if err != nil {
		return err
	}
	ts := httptest.NewServer(svc)
	defer ts.Close()
	reg, err := resilience.NewRegistry()
	if err != nil {
		return err
	}
	// README:begin http-client
	// The client sends the priority of each request's context.
	tr, err := resiliencehttp.NewTransport(reg, "api", ts.Client().Transport,
		resiliencehttp.TransportConfig{PriorityHeader: "X-Request-Priority"})
	if err != nil {
		return err
	}
	client := &http.Client{Transport: tr}
	// README:end http-client
	plain := ts.Client()
	get := func(c *http.Client, ctx context.Context, path, header string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+path, nil)
		if err != nil {
			return "", err
		}
		if header != "" {
			req.Header.Set("X-Request-Priority", header)
		}
		resp, err := c.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return string(body), err
	}
	fmt.Fprintln(w, "HTTP: X-Request-Priority, granted up to critical")
	for _, tc := range []struct{ path, header, note string }{
		{"/search", "sheddable", ""},
		{"/search", "sheddable_plus", ""},
		{"/search", "critical_plus", "capped"},
		{"/search", "urgent", "not a priority: by path"},
		{"/search", "", "by path"},
		{"/batch/reindex", "", "by path"},
		{"/checkout", "", "by path, not capped"},
	} {
		got, err := get(plain, ctx, tc.path, tc.header)
		if err != nil {
			return err
		}
		header := "no header"
		if tc.header != "" {
			header = "X-Request-Priority: " + tc.header
		}
		fmt.Fprintf(w, "  %-15s %-38s -> %s%s\n", tc.path, header, got, note(tc.note))
	}
	for _, p := range []policy.Priority{policy.PrioritySheddable, policy.PriorityCritical} {
		got, err := get(client, policy.WithPriority(ctx, p), "/search", "")
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  %-15s %-38s -> %s\n", "/search", "from the transport, context "+p.String(), got)
	}

	s := &seen{}
	srv, err := newGRPCServer(s)
	if err != nil {
		return err
	}
	ln := bufconn.Listen(1 << 20)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	defer func() {
		srv.Stop()
		<-done
	}()
	cl, err := resiliencegrpc.NewClient(reg, "health", resiliencegrpc.ClientConfig{PriorityMetadata: "x-request-priority"})
	if err != nil {
		return err
	}
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return ln.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(cl.UnaryInterceptor()))
	if err != nil {
		return err
	}
	defer conn.Close()
	health := healthpb.NewHealthClient(conn)
	fmt.Fprintln(w, "gRPC: x-request-priority, granted up to critical")
	for _, tc := range []struct {
		ctx  context.Context
		what string
	}{
		{policy.WithPriority(ctx, policy.PrioritySheddablePlus), "context sheddable_plus"},
		{policy.WithPriority(ctx, policy.PriorityCriticalPlus), "context critical_plus"},
		{ctx, "context without a priority"},
		{metadata.AppendToOutgoingContext(ctx, "x-request-priority", "0"), "metadata 0"},
	} {
		if _, err := health.Check(tc.ctx, &healthpb.HealthCheckRequest{}); err != nil {
			return err
		}
		fmt.Fprintf(w, "  Check, %-27s -> %s\n", tc.what, policy.Priority(s.last.Load()))
	}
	return nil
}

func note(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
