package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/httprate"
	"github.com/sethvargo/go-limiter/httplimit"
	"github.com/sethvargo/go-limiter/memorystore"
	ulule "github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/middleware/stdlib"
	ululemem "github.com/ulule/limiter/v3/drivers/store/memory"

	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	"github.com/resilience4go/resilience4go/resiliencehttp"
)

// The HTTP middleware benchmarks serve one GET request from one client, 203.0.113.7
// (its RemoteAddr; no forwarding header), through each library's per-client rate-limit
// middleware, keyed by the client's IP address, in front of a handler that does nothing,
// into a ResponseWriter that discards the body and reuses one header map, cleared before
// each request (a server makes a new one per request, the same cost on every side).
// The rates are those of the limiter benchmarks, the same on every side:
//   - admitted: a billion permits per second (every request passes);
//   - rejected: one permit per 1000 hours, taken by a request before the timer (every
//     request is answered 429 Too Many Requests with a short text body: by http.Error
//     on the peers' side, with the same fields and bytes written directly on ours).
//
// Each side, with its defaults but for the rate and a store that starts no goroutine:
//   - resilience4go/Middleware: resiliencehttp.NewMiddleware(keyed.New[string]
//     (Permits, Period)), keyed by resiliencehttp's client IP (the RemoteAddr's address,
//     cut from it); GCRA per key. Admitted: no header. Rejected: Retry-After,
//     RateLimit-Policy and RateLimit.
//   - resilience4go/MiddlewareHeaders: the same with AlwaysSendHeaders(true) and
//     LegacyHeaders("unix"): it also sends, on both outcomes, what the peers send,
//     X-RateLimit-Limit, -Remaining and -Reset (a Unix time).
//   - httprate/LimitByIP: httprate.LimitByIP(permits, period), keyed by KeyByIP
//     (net.SplitHostPort and CanonicalizeIP); a sliding window of two fixed-window counts
//     per key under one mutex. Both outcomes: X-RateLimit-Limit, -Remaining and -Reset
//     (a Unix time); rejected: also Retry-After.
//   - go-limiter/httplimit: httplimit.NewMiddleware(memorystore.New(Tokens, Interval),
//     httplimit.IPKeyFunc()) (net.SplitHostPort); a token bucket per key. Both outcomes:
//     X-RateLimit-Limit, -Remaining and -Reset (an RFC 1123 date); rejected: also
//     Retry-After.
//   - ulule/stdlib: stdlib.NewMiddleware(limiter.New(memory store, Rate{Period, Limit}))
//     keyed by Limiter.GetIPKey (net.ParseIP, masked to /32); a fixed window per key.
//     Both outcomes: X-RateLimit-Limit, -Remaining and -Reset (a Unix time).
//
// Every call's outcome is checked after the loop: a benchmark whose requests did not all
// pass (admitted) or all get 429 (rejected) fails.

// httpSide is one library under the benchmark: build returns its middleware around next,
// limiting each client to permits per period, and the function that releases it.
type httpSide struct {
	name  string
	build func(b *testing.B, permits int, period time.Duration, next http.Handler) (http.Handler, func())
}

func httpSides() []httpSide {
	ours := func(opts ...resiliencehttp.MiddlewareOption) func(*testing.B, int, time.Duration, http.Handler) (http.Handler, func()) {
		return func(b *testing.B, permits int, period time.Duration, next http.Handler) (http.Handler, func()) {
			k, err := keyed.New[string](ratelimit.Permits(permits), ratelimit.Period(period))
			if err != nil {
				b.Fatal(err)
			}
			mw, err := resiliencehttp.NewMiddleware(k, opts...)
			if err != nil {
				b.Fatal(err)
			}
			return mw(next), func() {}
		}
	}
	return []httpSide{
		{"resilience4go/Middleware", ours()},
		{"resilience4go/MiddlewareHeaders", ours(resiliencehttp.AlwaysSendHeaders(true),
			resiliencehttp.LegacyHeaders("unix"))},
		{"httprate/LimitByIP", func(_ *testing.B, permits int, period time.Duration, next http.Handler) (http.Handler, func()) {
			//lint:ignore SA1019 LimitByIP, keyed by RemoteAddr, is the middleware compared here
			return httprate.LimitByIP(permits, period)(next), func() {}
		}},
		{"go-limiter/httplimit", func(b *testing.B, permits int, period time.Duration, next http.Handler) (http.Handler, func()) {
			s, err := memorystore.New(&memorystore.Config{Tokens: uint64(permits), Interval: period})
			if err != nil {
				b.Fatal(err)
			}
			mw, err := httplimit.NewMiddleware(s, httplimit.IPKeyFunc())
			if err != nil {
				b.Fatal(err)
			}
			return mw.Handle(next), func() { _ = s.Close(context.Background()) }
		}},
		{"ulule/stdlib", func(_ *testing.B, permits int, period time.Duration, next http.Handler) (http.Handler, func()) {
			l := ulule.New(ululemem.NewStoreWithOptions(ulule.StoreOptions{Prefix: ulule.DefaultPrefix}),
				ulule.Rate{Period: period, Limit: int64(permits)})
			return stdlib.NewMiddleware(l).Handler(next), func() {}
		}},
	}
}

// httpCase is one outcome: the rate, and the status every timed request must get (0:
// none written, the request reached the handler).
type httpCase struct {
	name    string
	permits int
	period  time.Duration
	status  int
}

var httpCases = []httpCase{
	{"admitted", admitPermits, admitPeriod, 0},
	{"rejected", 1, rejectPeriod, http.StatusTooManyRequests},
}

var nopHandler = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})

func clientRequest() *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/v1/items", nil)
	r.RemoteAddr = "203.0.113.7:51234"
	return r
}

// discardWriter is a ResponseWriter that keeps one header map and the last status.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header       { return w.h }
func (*discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(code int)      { w.status = code }

// serve serves r with h into w, its header cleared first, and reports whether the
// request got status.
func (w *discardWriter) serve(h http.Handler, r *http.Request, status int) bool {
	clear(w.h)
	w.status = 0
	h.ServeHTTP(w, r)
	return w.status == status
}

// prepare builds side's middleware for c and, for rejected, takes the client's permit.
func (c httpCase) prepare(b *testing.B, side httpSide) (http.Handler, func()) {
	h, stop := side.build(b, c.permits, c.period, nopHandler)
	if c.status != 0 {
		w := &discardWriter{h: http.Header{}}
		if !w.serve(h, clientRequest(), 0) {
			stop()
			b.Fatalf("the first request got %d", w.status)
		}
	}
	return h, stop
}

// BenchmarkMiddleware serves the client's requests one at a time (see the comment above
// httpSide for what each side does).
func BenchmarkMiddleware(b *testing.B) {
	for _, side := range httpSides() {
		for _, c := range httpCases {
			b.Run(side.name+"/"+c.name, func(b *testing.B) {
				h, stop := c.prepare(b, side)
				defer stop()
				r, w := clientRequest(), &discardWriter{h: http.Header{}}
				var wrong int
				b.ReportAllocs()
				for b.Loop() {
					if !w.serve(h, r, c.status) {
						wrong++
					}
				}
				if wrong > 0 {
					b.Fatalf("%d requests did not get %d", wrong, c.status)
				}
			})
		}
	}
}

// BenchmarkMiddlewareParallel is BenchmarkMiddleware with b.RunParallel: every goroutine
// serves requests of the same client, each with its own request and writer.
func BenchmarkMiddlewareParallel(b *testing.B) {
	for _, side := range httpSides() {
		for _, c := range httpCases {
			b.Run(side.name+"/"+c.name, func(b *testing.B) {
				h, stop := c.prepare(b, side)
				defer stop()
				var wrong atomic.Int64
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					r, w := clientRequest(), &discardWriter{h: http.Header{}}
					var n int64
					for pb.Next() {
						if !w.serve(h, r, c.status) {
							n++
						}
					}
					wrong.Add(n)
				})
				if n := wrong.Load(); n > 0 {
					b.Fatalf("%d requests did not get %d", n, c.status)
				}
			})
		}
	}
}
