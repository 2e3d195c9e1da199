package resiliencehttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencehttp"
)

var noop = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})

func benchRequest(remote string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/v1/items", nil)
	r.RemoteAddr = remote
	return r
}

func benchMiddleware(b *testing.B, permits int, opts ...resiliencehttp.MiddlewareOption) http.Handler {
	k, err := keyed.New[string](ratelimit.Permits(permits), ratelimit.Period(time.Second))
	if err != nil {
		b.Fatal(err)
	}
	return middleware(b, k, opts...)(noop)
}

// The floor: the bare handler, called directly.
func BenchmarkServeBareHandler(b *testing.B) {
	r, w := benchRequest("203.0.113.7:51234"), &nopWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		noop.ServeHTTP(w, r)
	}
}

// The middleware around the bare handler, for a client it already holds: its overhead
// per request is this minus BenchmarkServeBareHandler.
func BenchmarkServeMiddlewareAdmitted(b *testing.B) {
	h := benchMiddleware(b, 1_000_000_000)
	r, w := benchRequest("203.0.113.7:51234"), &nopWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
}

// An IPv6 client, keyed by its /64.
func BenchmarkServeMiddlewareAdmittedIPv6(b *testing.B) {
	h := benchMiddleware(b, 1_000_000_000)
	r, w := benchRequest("[2001:db8:1:2:3:4:5:6]:51234"), &nopWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
}

// The client IP from X-Forwarded-For, through a trusted proxy.
func BenchmarkServeMiddlewareAdmittedTrustedProxy(b *testing.B) {
	h := benchMiddleware(b, 1_000_000_000, resiliencehttp.TrustedProxies(netip.MustParsePrefix("10.0.0.0/8")))
	r, w := benchRequest("10.0.0.1:51234"), &nopWriter{h: http.Header{}}
	r.Header.Set("X-Forwarded-For", "198.51.100.9, 203.0.113.7, 10.0.0.2")
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
}

// A refused request: the 429, its three rate-limit fields and the two of the text body,
// into a header map that is reused, cleared between requests, as a server's is not (it
// makes one per request: a cost outside the middleware).
func BenchmarkServeMiddlewareRejected(b *testing.B) {
	h := benchMiddleware(b, 1)
	r, w := benchRequest("203.0.113.7:51234"), &nopWriter{h: http.Header{}}
	h.ServeHTTP(w, r)
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, r)
	}
}

// The same with the legacy X-RateLimit fields, their reset a Unix time.
func BenchmarkServeMiddlewareRejectedLegacy(b *testing.B) {
	h := benchMiddleware(b, 1, resiliencehttp.LegacyHeaders("unix"))
	r, w := benchRequest("203.0.113.7:51234"), &nopWriter{h: http.Header{}}
	h.ServeHTTP(w, r)
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, r)
	}
}

// One refused client, many goroutines: they share the formatted field values.
func BenchmarkServeMiddlewareRejectedParallel(b *testing.B) {
	h := benchMiddleware(b, 1)
	r := benchRequest("203.0.113.7:51234")
	h.ServeHTTP(&nopWriter{h: http.Header{}}, r)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		w := &nopWriter{h: http.Header{}}
		for pb.Next() {
			clear(w.h)
			h.ServeHTTP(w, r)
		}
	})
}

// An admitted request with AlwaysSendHeaders: the two rate-limit fields on every response.
func BenchmarkServeMiddlewareAdmittedAlwaysSendHeaders(b *testing.B) {
	h := benchMiddleware(b, 1_000_000_000, resiliencehttp.AlwaysSendHeaders(true))
	r, w := benchRequest("203.0.113.7:51234"), &nopWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, r)
	}
}

// 1,024 clients, many goroutines.
func BenchmarkServeMiddlewareAdmittedParallel(b *testing.B) {
	h := benchMiddleware(b, 1_000_000_000)
	reqs := make([]*http.Request, 1024)
	for i := range reqs {
		reqs[i] = benchRequest("10." + strconv.Itoa(i>>8) + "." + strconv.Itoa(i&255) + ".1:5000")
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		w := &nopWriter{h: http.Header{}}
		i := 0
		for pb.Next() {
			h.ServeHTTP(w, reqs[i&1023])
			i++
		}
	})
}

// Over real HTTP on loopback, for scale: a request costs tens of microseconds either way.
func BenchmarkLoopbackBareHandler(b *testing.B) { benchLoopback(b, noop) }

func BenchmarkLoopbackMiddleware(b *testing.B) {
	benchLoopback(b, benchMiddleware(b, 1_000_000_000))
}

func benchLoopback(b *testing.B, h http.Handler) {
	srv := httptest.NewServer(h)
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	b.ReportAllocs()
	for b.Loop() {
		resp, err := c.Get(srv.URL)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
}

// memoryRT answers every request at once from memory.
type memoryRT struct{}

func (memoryRT) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
}

// The transport's own cost per request, over an in-memory RoundTripper: bare, and through
// retry, breaker and rate limiter.
func BenchmarkTransportBare(b *testing.B) { benchTransport(b, memoryRT{}) }

func BenchmarkTransportRetryBreakerLimiter(b *testing.B) {
	reg, err := resilience.NewRegistry(resilience.WithClock(clock.System()))
	if err != nil {
		b.Fatal(err)
	}
	tr, err := resiliencehttp.NewTransport(reg, "bench", memoryRT{}, resiliencehttp.TransportConfig{},
		resilience.Retry(retry.MaxAttempts(3)), resilience.CircuitBreaker(circuitbreaker.IgnoreOn(resiliencehttp.ErrNotFailure, ratelimit.ErrExceeded)),
		resilience.RateLimiter(ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second)))
	if err != nil {
		b.Fatal(err)
	}
	benchTransport(b, tr)
}

func benchTransport(b *testing.B, rt http.RoundTripper) {
	req := httptest.NewRequest(http.MethodGet, "http://api.example/v1/items", nil)
	req.RequestURI = ""
	b.ReportAllocs()
	for b.Loop() {
		resp, err := rt.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		_ = resp.Body.Close()
	}
}
