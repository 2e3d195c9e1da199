package resiliencehttp_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resiliencehttp"
)

func newKeyed(t testing.TB, clk clock.Clock, opts ...ratelimit.Option) *ratelimit.Keyed[string] {
	t.Helper()
	k, err := ratelimit.NewKeyed[string](append([]ratelimit.Option{ratelimit.WithClock(clk)}, opts...)...)
	require.NoError(t, err)
	return k
}

// serve runs h on a loopback server for the test.
func serve(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

var hello = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "hello\n") })

// clientFrom returns a client whose connections come from the loopback address ip.
func clientFrom(t testing.TB, ip string) *http.Client {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

type reply struct {
	status int
	header http.Header
	body   string
}

func get(t testing.TB, c *http.Client, url string, header ...string) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return reply{resp.StatusCode, resp.Header, string(b)}
}

// SPEC RL-6, RL-9b over HTTP: the 11th request within a second from one client gets 429
// with Retry-After: 1 and the exact RateLimit fields; another client is unaffected; and
// after T = 100ms the first client passes again.
func TestMiddleware_EleventhRequestFromOneClientGets429(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed(t, clk, ratelimit.Permits(10), ratelimit.Period(time.Second))
	srv := serve(t, resiliencehttp.Middleware(k)(hello))
	alice := clientFrom(t, "127.0.0.1")

	for i := range 10 {
		r := get(t, alice, srv.URL)
		require.Equal(t, http.StatusOK, r.status, "request %d", i+1)
		assert.Empty(t, r.header.Values("RateLimit"), "no fields on admitted responses by default")
	}
	r := get(t, alice, srv.URL)
	assert.Equal(t, http.StatusTooManyRequests, r.status)
	assert.Equal(t, []string{"1"}, r.header.Values("Retry-After"))
	assert.Equal(t, []string{`"default";q=10;w=1`}, r.header.Values("RateLimit-Policy"))
	assert.Equal(t, []string{`"default";r=0;t=1`}, r.header.Values("RateLimit"))
	assert.Equal(t, "Too Many Requests\n", r.body)

	bob := clientFrom(t, "127.0.0.2")
	if resp, err := bob.Get(srv.URL); err != nil {
		t.Logf("cannot connect from 127.0.0.2 (%v): TestMiddleware_KeyFunc_AnotherClientIsUnaffected checks another client by key", err)
	} else {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		for range 9 {
			assert.Equal(t, http.StatusOK, get(t, bob, srv.URL).status, "another client is unaffected")
		}
		assert.Equal(t, 2, k.Len(), "one key per client IP")
	}

	clk.Advance(100 * time.Millisecond)
	assert.Equal(t, http.StatusOK, get(t, alice, srv.URL).status, "one permit every 100ms")
	r = get(t, alice, srv.URL)
	assert.Equal(t, http.StatusTooManyRequests, r.status)
	assert.Equal(t, `"default";r=0;t=1`, r.header.Get("RateLimit"))
}

// Clients keyed by an API key: one client's flood leaves another's quota untouched.
func TestMiddleware_KeyFunc_AnotherClientIsUnaffected(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed(t, clk, ratelimit.Permits(10), ratelimit.Period(time.Second))
	srv := serve(t, resiliencehttp.Middleware(k,
		resiliencehttp.KeyFunc(func(r *http.Request) string { return r.Header.Get("X-Api-Key") }))(hello))
	c := clientFrom(t, "127.0.0.1")

	for range 10 {
		require.Equal(t, http.StatusOK, get(t, c, srv.URL, "X-Api-Key", "alice").status)
	}
	assert.Equal(t, http.StatusTooManyRequests, get(t, c, srv.URL, "X-Api-Key", "alice").status)
	for i := range 10 {
		assert.Equal(t, http.StatusOK, get(t, c, srv.URL, "X-Api-Key", "bob").status, "bob's request %d", i+1)
	}
	assert.Equal(t, http.StatusTooManyRequests, get(t, c, srv.URL, "X-Api-Key", "bob").status)
}

// X-Forwarded-For is ignored unless the proxies that write it are named: without
// TrustedProxies, spoofed headers all count against the connection's IP.
func TestMiddleware_XForwardedForIsIgnoredUnlessConfigured(t *testing.T) {
	clk := clock.NewManual()
	c := clientFrom(t, "127.0.0.1")

	k := newKeyed(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second))
	srv := serve(t, resiliencehttp.Middleware(k)(hello))
	assert.Equal(t, http.StatusOK, get(t, c, srv.URL, "X-Forwarded-For", "203.0.113.1").status)
	assert.Equal(t, http.StatusTooManyRequests, get(t, c, srv.URL, "X-Forwarded-For", "203.0.113.2").status,
		"a new X-Forwarded-For does not make a new client")
	assert.Equal(t, http.StatusTooManyRequests, get(t, c, srv.URL, "Forwarded", "for=203.0.113.3").status)
	assert.Equal(t, 1, k.Len())

	// With the loopback proxy trusted, the header names the client.
	k = newKeyed(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second))
	srv = serve(t, resiliencehttp.Middleware(k, resiliencehttp.TrustedProxies(netip.MustParsePrefix("127.0.0.0/8")))(hello))
	assert.Equal(t, http.StatusOK, get(t, c, srv.URL, "X-Forwarded-For", "203.0.113.1").status)
	assert.Equal(t, http.StatusOK, get(t, c, srv.URL, "X-Forwarded-For", "203.0.113.2").status, "another client")
	assert.Equal(t, http.StatusTooManyRequests, get(t, c, srv.URL, "X-Forwarded-For", "203.0.113.1").status)
	assert.Equal(t, http.StatusTooManyRequests, get(t, c, srv.URL, "X-Forwarded-For", "198.51.100.9, 203.0.113.1").status,
		"entries left of the client, which it wrote itself, do not count")
	assert.Equal(t, http.StatusOK, get(t, c, srv.URL, "Forwarded", "for=198.51.100.7").status, "the proxy itself")
	assert.Equal(t, http.StatusTooManyRequests, get(t, c, srv.URL, "Forwarded", "for=198.51.100.8").status,
		"only the configured header is read: Forwarded does not make a new client")
}

// ClientIP walks the forwarding header from the nearest hop over the trusted proxies.
func TestClientIP(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:ffff::/48")}
	for _, tc := range []struct {
		name, remote, header, value, want string
	}{
		{"no header", "10.1.1.1:5000", "X-Forwarded-For", "", "10.1.1.1"},
		{"untrusted peer: header ignored", "192.0.2.1:5000", "X-Forwarded-For", "203.0.113.5", "192.0.2.1"},
		{"one proxy", "10.1.1.1:5000", "X-Forwarded-For", "203.0.113.5", "203.0.113.5"},
		{"spoofed entries on the left", "10.1.1.1:5000", "X-Forwarded-For", "1.2.3.4, 203.0.113.5", "203.0.113.5"},
		{"two proxies", "10.1.1.1:5000", "X-Forwarded-For", "203.0.113.5, 10.2.2.2", "203.0.113.5"},
		{"all trusted: the farthest", "10.1.1.1:5000", "X-Forwarded-For", "10.3.3.3, 10.2.2.2", "10.3.3.3"},
		{"garbage ends the walk", "10.1.1.1:5000", "X-Forwarded-For", "203.0.113.5, garbage, 10.2.2.2", "10.2.2.2"},
		{"port dropped", "10.1.1.1:5000", "X-Forwarded-For", "203.0.113.5:4711", "203.0.113.5"},
		{"IPv6 peer", "[2001:db8:ffff::1]:5000", "X-Forwarded-For", "2001:db8::7", "2001:db8::7"},
		{"mapped IPv4 peer", "[::ffff:10.1.1.1]:5000", "X-Forwarded-For", "203.0.113.5", "203.0.113.5"},
		{"Forwarded", "10.1.1.1:5000", "Forwarded", `for=198.51.100.1, for="[2001:db8::17]:4711";proto=https`, "2001:db8::17"},
		{"Forwarded unknown", "10.1.1.1:5000", "Forwarded", `for=unknown`, "10.1.1.1"},
		{"Forwarded without for", "10.1.1.1:5000", "Forwarded", `proto=https;by=10.9.9.9`, "10.1.1.1"},
		{"Forwarded, case and quotes", "10.1.1.1:5000", "Forwarded", `For="198.51.100.1"`, "198.51.100.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tc.remote
			if tc.value != "" {
				r.Header.Set(tc.header, tc.value)
			}
			assert.Equal(t, tc.want, resiliencehttp.ClientIP(tc.header, trusted...)(r))
		})
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "10.1.1.1:5000"
	r.Header.Add("X-Forwarded-For", "203.0.113.5")
	r.Header.Add("X-Forwarded-For", "10.2.2.2")
	assert.Equal(t, "203.0.113.5", resiliencehttp.ClientIP("", trusted...)(r), "several header lines, in order")
	assert.Equal(t, "10.1.1.1", resiliencehttp.ClientIP("X-Forwarded-For")(r), "no trusted proxy: the peer")
	r.RemoteAddr = "pipe"
	assert.Equal(t, "pipe", resiliencehttp.ClientIP("X-Forwarded-For", trusted...)(r), "not an address")
}

// Exempt paths pass unlimited; OnReject and PolicyName shape the refusal; with
// AlwaysSendHeaders admitted responses carry the fields too.
func TestMiddleware_ExemptOnRejectPolicyNameAlwaysSendHeaders(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed(t, clk, ratelimit.Permits(2), ratelimit.Period(2500*time.Millisecond)) // T = 1.25s
	var gotRetryAfter time.Duration
	srv := serve(t, resiliencehttp.Middleware(k,
		resiliencehttp.Exempt("/healthz", "/static/", ""),
		resiliencehttp.PolicyName(`per "client"`+"\n"),
		resiliencehttp.AlwaysSendHeaders(true),
		resiliencehttp.OnReject(func(w http.ResponseWriter, r *http.Request, retryAfter time.Duration) {
			gotRetryAfter = retryAfter
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"title":"slow down"}`)
		}))(hello))
	c := clientFrom(t, "127.0.0.1")

	r := get(t, c, srv.URL+"/a")
	assert.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, `"per \"client\"";q=2;w=3`, r.header.Get("RateLimit-Policy"), "w rounded up to whole seconds")
	assert.Equal(t, `"per \"client\"";r=1;t=2`, r.header.Get("RateLimit"), "full quota back in 1.25s: t=2")
	assert.Equal(t, http.StatusOK, get(t, c, srv.URL+"/a").status)
	for range 5 {
		assert.Equal(t, http.StatusOK, get(t, c, srv.URL+"/healthz").status)
		assert.Equal(t, http.StatusOK, get(t, c, srv.URL+"/static/app.js").status)
	}
	r = get(t, c, srv.URL+"/healthz/x")
	assert.Equal(t, http.StatusTooManyRequests, r.status, "only the exact path")
	assert.Equal(t, `{"title":"slow down"}`, r.body)
	assert.Equal(t, "application/problem+json", r.header.Get("Content-Type"))
	assert.Equal(t, "2", r.header.Get("Retry-After"), "1.25s rounded up")
	assert.Equal(t, 1250*time.Millisecond, gotRetryAfter)
	assert.Equal(t, `"per \"client\"";r=0;t=3`, r.header.Get("RateLimit"))
}

// A flood of spoofed client addresses through a trusted proxy fills the limiter up to
// MaxKeys; past it, new clients are refused with a Retry-After, and the clients already
// held keep their quota.
func TestMiddleware_SpoofedClientsAreBoundedByMaxKeys(t *testing.T) {
	clk := clock.NewManual()
	var events int
	k := newKeyed(t, clk, ratelimit.Permits(5), ratelimit.Period(time.Second), ratelimit.MaxKeys(256),
		ratelimit.OnEvent(func(e policy.Event) { events++ }))
	h := resiliencehttp.Middleware(k, resiliencehttp.TrustedProxies(netip.MustParsePrefix("10.0.0.0/8")))(hello)
	call := func(client string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = "10.0.0.1:3000"
		r.Header.Set("X-Forwarded-For", client)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	require.Equal(t, http.StatusOK, call("198.51.100.1").Code)
	refused := 0
	for i := range 10_000 {
		if call(netip.AddrFrom4([4]byte{203, 0, byte(i >> 8), byte(i)}).String()).Code == http.StatusTooManyRequests {
			refused++
		}
	}
	assert.LessOrEqual(t, k.Len(), 256)
	assert.Equal(t, 10_000-255, refused)
	assert.Equal(t, refused, events)
	w := call("192.0.2.1")
	assert.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.Equal(t, "1", w.Header().Get("Retry-After"), "room in 200ms")
	assert.Equal(t, http.StatusOK, call("198.51.100.1").Code, "a client already held keeps its quota")
	clk.Advance(time.Second)
	assert.Equal(t, http.StatusOK, call("192.0.2.1").Code, "idle keys were evicted to make room")
}

// An admitted request for a known client allocates nothing in the middleware.
func TestMiddleware_AdmittedRequestAllocatesNothing(t *testing.T) {
	k := newKeyed(t, clock.NewManual(), ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second))
	h := resiliencehttp.Middleware(k)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "203.0.113.7:51234"
	w := &nopWriter{h: http.Header{}}
	h.ServeHTTP(w, r)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { h.ServeHTTP(w, r) }))
}

// nopWriter is a ResponseWriter that discards everything.
type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header       { return w.h }
func (*nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (*nopWriter) WriteHeader(int)             {}

// Exempt paths are matched on the cleaned path: dot segments cannot smuggle a limited
// path under an exempt prefix.
func TestMiddleware_ExemptMatchesTheCleanedPath(t *testing.T) {
	clk := clock.NewManual()
	k, err := ratelimit.NewKeyed[string](ratelimit.Permits(1), ratelimit.Period(time.Hour), ratelimit.WithClock(clk))
	require.NoError(t, err)
	h := resiliencehttp.Middleware(k, resiliencehttp.Exempt("/static/", "/healthz"))(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	status := func(p string) int {
		r := httptest.NewRequest(http.MethodGet, "http://svc"+p, nil) // decoded as a server would
		r.RemoteAddr = "192.0.2.1:1234"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	for range 3 {
		assert.Equal(t, http.StatusOK, status("/static/app.js"))
		assert.Equal(t, http.StatusOK, status("/healthz"))
		assert.Equal(t, http.StatusOK, status("//healthz"))
	}
	assert.Equal(t, http.StatusOK, status("/api"), "the client's one permit")
	for _, p := range []string{"/static/../api", "/healthz/../api", "/static/%2e%2e/api", "/healthzX"} {
		assert.Equal(t, http.StatusTooManyRequests, status(p), p)
	}
}
