package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	fsgrpc "github.com/failsafe-go/failsafe-go/failsafegrpc"
	fshttp "github.com/failsafe-go/failsafe-go/failsafehttp"
	fspriority "github.com/failsafe-go/failsafe-go/priority"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
	"github.com/resilience4go/resilience4go/resiliencehttp"
)

// The priority benchmarks measure what it costs a server to give a request the priority
// its client sent, the lowest (so that the request's context changes), and the handler
// checks that it got it:
//   - resilience4go: PriorityHeader("X-Request-Priority", PriorityCritical) reading
//     "sheddable"; PriorityMetadata("x-request-priority", PriorityCritical) reading
//     "sheddable" from the incoming metadata.
//   - failsafe-go: failsafehttp.NewHandlerWithLevel(h, false) reading X-Failsafe-Priority
//     "0"; failsafegrpc.NewUnaryServerInterceptorWithLevel(false) reading
//     x-failsafe-priority "0".
//
// resiliencehttp sets the priority in its rate-limit middleware: its HTTP cost is the
// difference of Priority/http/resilience4go (the middleware with PriorityHeader) and
// Priority/http/resilience4go-none (the same middleware, same request, without it); the
// rate limit admits every request (a billion per second). failsafe-go's handler does
// nothing else: its cost is Priority/http/failsafe-go less Priority/http/plain (the
// handler alone). On gRPC both interceptors only set the priority.
func BenchmarkPriorityHeader(b *testing.B) {
	handler := func(check func(context.Context) bool) http.Handler {
		return http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			if !check(r.Context()) {
				b.Fatal("the request did not get its priority")
			}
		})
	}
	ours := func(ctx context.Context) bool { return policy.PriorityFrom(ctx) == policy.PrioritySheddable }
	theirs := func(ctx context.Context) bool { return fspriority.FromContext(ctx) == fspriority.VeryLow }
	anyPriority := func(context.Context) bool { return true }
	middleware := func(opts ...resiliencehttp.MiddlewareOption) func(http.Handler) http.Handler {
		k, err := keyed.New[string](ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second))
		if err != nil {
			b.Fatal(err)
		}
		mw, err := resiliencehttp.NewMiddleware(k, opts...)
		if err != nil {
			b.Fatal(err)
		}
		return mw
	}
	request := func(header, value string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = "203.0.113.7:51234"
		r.Header.Set(header, value)
		return r
	}
	for _, side := range []struct {
		name string
		h    http.Handler
		r    *http.Request
	}{
		{"http/resilience4go", middleware(resiliencehttp.PriorityHeader("X-Request-Priority", policy.PriorityCritical))(handler(ours)),
			request("X-Request-Priority", "sheddable")},
		{"http/resilience4go-none", middleware()(handler(anyPriority)), request("X-Request-Priority", "sheddable")},
		{"http/failsafe-go", fshttp.NewHandlerWithLevel(handler(theirs), false), request("X-Failsafe-Priority", "0")},
		{"http/plain", handler(anyPriority), request("X-Failsafe-Priority", "0")},
	} {
		b.Run(side.name, func(b *testing.B) {
			w := &priorityWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				side.h.ServeHTTP(w, side.r)
			}
		})
	}

	srv, err := resiliencegrpc.NewServer(resiliencegrpc.PriorityMetadata("x-request-priority", policy.PriorityCritical))
	if err != nil {
		b.Fatal(err)
	}
	for _, side := range []struct {
		name  string
		ic    grpc.UnaryServerInterceptor
		md    metadata.MD
		check func(context.Context) bool
	}{
		{"grpc/resilience4go", srv.UnaryInterceptor(), metadata.Pairs("x-request-priority", "sheddable"), ours},
		{"grpc/failsafe-go", fsgrpc.NewUnaryServerInterceptorWithLevel(false), metadata.Pairs("x-failsafe-priority", "0"), theirs},
	} {
		b.Run(side.name, func(b *testing.B) {
			ctx := metadata.NewIncomingContext(peer.NewContext(context.Background(), grpcPeer), side.md)
			h := func(ctx context.Context, req any) (any, error) {
				if !side.check(ctx) {
					b.Fatal("the call did not get its priority")
				}
				return req, nil
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := side.ic(ctx, grpcReq, grpcInfo, h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// priorityWriter is a ResponseWriter that discards everything.
type priorityWriter struct{ h http.Header }

func (w *priorityWriter) Header() http.Header       { return w.h }
func (*priorityWriter) Write(p []byte) (int, error) { return len(p), nil }
func (*priorityWriter) WriteHeader(int)             {}
