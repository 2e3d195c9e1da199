// Command perclient protects a server from any one client: an HTTP service and a gRPC
// service each give every API key its own quota of 3 requests per minute, so that a client
// that spends its quota is refused while the others go on. Requests without an API key
// are limited per client IP address instead. A manual clock makes the output the same on
// every run.
//
//	go run ./examples/perclient
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
	"github.com/resilience4go/resilience4go/resiliencehttp"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "perclient:", err)
		os.Exit(1)
	}
}

// newHTTPService is the HTTP service, limited per API key.
func newHTTPService(clk clock.Clock) (http.Handler, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/items", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, `["widget","gadget"]`)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	// README:begin http-server
	perKey, err := keyed.New[string](
		ratelimit.Permits(3), ratelimit.Period(time.Minute), // 3 requests per minute per key
		ratelimit.WithClock(clk), // leave out for the system clock
	)
	if err != nil {
		return nil, err
	}
	limit, err := resiliencehttp.NewMiddleware(perKey,
		// Key by API key; a request without one ("") is keyed by its client IP.
		resiliencehttp.KeyFunc(func(r *http.Request) string { return r.Header.Get("X-API-Key") }),
		resiliencehttp.Exempt("/healthz"),
	)
	if err != nil {
		return nil, err
	}
	return limit(mux), nil
	// README:end http-server
}

// newGRPCServer is the gRPC server, limited per API key, with the health service standing
// in for the service's own.
func newGRPCServer(clk clock.Clock) (*grpc.Server, error) {
	// README:begin grpc-server
	perKey, err := keyed.New[string](
		ratelimit.Permits(3), ratelimit.Period(time.Minute), // 3 calls per minute per key
		ratelimit.WithClock(clk), // leave out for the system clock
	)
	if err != nil {
		return nil, err
	}
	guard, err := resiliencegrpc.NewServer(
		// Key by the x-api-key metadata; a call without it is keyed by its peer.
		resiliencegrpc.Limit(perKey, resiliencegrpc.ByMetadata("x-api-key")),
	)
	if err != nil {
		return nil, err
	}
	s := grpc.NewServer(
		grpc.ChainUnaryInterceptor(guard.UnaryInterceptor()),
		grpc.ChainStreamInterceptor(guard.StreamInterceptor()))
	// README:end grpc-server
	healthpb.RegisterHealthServer(s, health.NewServer())
	return s, nil
}

func run(ctx context.Context, w io.Writer) error {
	clk := clock.NewManual()

	svc, err := newHTTPService(clk)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "HTTP: 3 requests per minute per API key")
	get := func(path, key string) *http.Response {
		r := httptest.NewRequest(http.MethodGet, path, nil) // from 192.0.2.1
		if key != "" {
			r.Header.Set("X-API-Key", key)
		}
		rec := httptest.NewRecorder()
		svc.ServeHTTP(rec, r)
		return rec.Result()
	}
	for i := 1; i <= 4; i++ {
		resp := get("/api/items", "alice")
		fmt.Fprintf(w, "  alice, request %d: %s", i, resp.Status)
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			fmt.Fprintf(w, ", Retry-After: %s", ra)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  bob, request 1: %s (another key, another quota)\n", get("/api/items", "bob").Status)
	fmt.Fprintf(w, "  no key, request 1: %s (keyed by client IP)\n", get("/api/items", "").Status)
	fmt.Fprintf(w, "  alice, /healthz: %s (exempt)\n", get("/healthz", "alice").Status)
	clk.Advance(20 * time.Second)
	fmt.Fprintf(w, "  alice, 20s later: %s (one permit every 20s)\n", get("/api/items", "alice").Status)

	srv, err := newGRPCServer(clk)
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
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return ln.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	check := func(key string) string {
		ctx := metadata.AppendToOutgoingContext(ctx, "x-api-key", key)
		_, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
		st := status.Convert(err)
		if d, ok := resiliencegrpc.RetryDelay(err); ok {
			return fmt.Sprintf("%s, retry in %v", st.Code(), d)
		}
		return st.Code().String()
	}
	fmt.Fprintln(w, "gRPC: 3 calls per minute per x-api-key")
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(w, "  alice, call %d: %s\n", i, check("alice"))
	}
	fmt.Fprintf(w, "  bob, call 1: %s\n", check("bob"))
	return nil
}
