package resiliencehttp_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	"github.com/resilience4go/resilience4go/resiliencehttp"
)

func newKeyed(t testing.TB, clk clock.Clock, opts ...ratelimit.Option) *keyed.Limiter[string] {
	t.Helper()
	k, err := keyed.New[string](append([]ratelimit.Option{ratelimit.WithClock(clk)}, opts...)...)
	require.NoError(t, err)
	return k
}

// middleware is NewMiddleware with a configuration that the test knows is valid.
func middleware(t testing.TB, k resiliencehttp.KeyedLimiter, opts ...resiliencehttp.MiddlewareOption) func(http.Handler) http.Handler {
	t.Helper()
	mw, err := resiliencehttp.NewMiddleware(k, opts...)
	require.NoError(t, err)
	return mw
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
	srv := serve(t, middleware(t, k)(hello))
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
	srv := serve(t, middleware(t, k,
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

// A request for which KeyFunc returns "" is keyed by its client, with the prefixes and
// trusted proxies given: requests without an API key share no one quota.
func TestMiddleware_KeyFunc_EmptyKeyFallsBackOnTheClient(t *testing.T) {
	k := newKeyed(t, clock.NewManual(), ratelimit.Permits(1), ratelimit.Period(time.Second))
	h := middleware(t, k, resiliencehttp.IPv4Prefix(24), resiliencehttp.TrustedProxies(netip.MustParsePrefix("10.0.0.0/8")),
		resiliencehttp.KeyFunc(func(r *http.Request) string { return r.Header.Get("X-Api-Key") }))(hello)

	assert.Equal(t, http.StatusOK, statusOf(h, "192.0.2.1:1000"))
	assert.Equal(t, http.StatusTooManyRequests, statusOf(h, "192.0.2.99:1000"), "the same /24")
	assert.Equal(t, http.StatusOK, statusOf(h, "198.51.100.1:1000"), "another client")
	assert.Equal(t, http.StatusOK, statusOf(h, "10.0.0.1:1000", "X-Forwarded-For", "203.0.113.7"), "the client behind the proxy")
	assert.Equal(t, http.StatusTooManyRequests, statusOf(h, "10.0.0.2:1000", "X-Forwarded-For", "203.0.113.8"))
	assert.Equal(t, http.StatusOK, statusOf(h, "192.0.2.1:1000", "X-Api-Key", "alice"), "an API key has its own quota")
	assert.Equal(t, http.StatusTooManyRequests, statusOf(h, "198.51.100.1:1000", "X-Api-Key", "alice"))
}

// X-Forwarded-For is ignored unless the proxies that write it are named: without
// TrustedProxies, spoofed headers all count against the connection's IP.
func TestMiddleware_XForwardedForIsIgnoredUnlessConfigured(t *testing.T) {
	clk := clock.NewManual()
	c := clientFrom(t, "127.0.0.1")

	k := newKeyed(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second))
	srv := serve(t, middleware(t, k)(hello))
	assert.Equal(t, http.StatusOK, get(t, c, srv.URL, "X-Forwarded-For", "203.0.113.1").status)
	assert.Equal(t, http.StatusTooManyRequests, get(t, c, srv.URL, "X-Forwarded-For", "203.0.113.2").status,
		"a new X-Forwarded-For does not make a new client")
	assert.Equal(t, http.StatusTooManyRequests, get(t, c, srv.URL, "Forwarded", "for=203.0.113.3").status)
	assert.Equal(t, 1, k.Len())

	// With the loopback proxy trusted, the header names the client.
	k = newKeyed(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second))
	srv = serve(t, middleware(t, k, resiliencehttp.TrustedProxies(netip.MustParsePrefix("127.0.0.0/8")))(hello))
	assert.Equal(t, http.StatusOK, get(t, c, srv.URL, "X-Forwarded-For", "203.0.113.1").status)
	assert.Equal(t, http.StatusOK, get(t, c, srv.URL, "X-Forwarded-For", "203.0.113.2").status, "another client")
	assert.Equal(t, http.StatusTooManyRequests, get(t, c, srv.URL, "X-Forwarded-For", "203.0.113.1").status)
	assert.Equal(t, http.StatusTooManyRequests, get(t, c, srv.URL, "X-Forwarded-For", "198.51.100.9, 203.0.113.1").status,
		"entries left of the client, which it wrote itself, do not count")
	assert.Equal(t, http.StatusOK, get(t, c, srv.URL, "Forwarded", "for=198.51.100.7").status, "the proxy itself")
	assert.Equal(t, http.StatusTooManyRequests, get(t, c, srv.URL, "Forwarded", "for=198.51.100.8").status,
		"only the configured header is read: Forwarded does not make a new client")
}

// Exempt paths pass unlimited; OnReject and PolicyName shape the refusal; with
// AlwaysSendHeaders admitted responses carry the fields too.
func TestMiddleware_ExemptOnRejectPolicyNameAlwaysSendHeaders(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed(t, clk, ratelimit.Permits(2), ratelimit.Period(2500*time.Millisecond)) // T = 1.25s
	var gotRetryAfter time.Duration
	srv := serve(t, middleware(t, k,
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

// A flood of spoofed client addresses through a trusted proxy is bounded by MaxKeys.
// What a full limiter does with a new key is keyed.Limiter's to decide; the middleware
// answers its decision: every refusal is a 429 with Retry-After and the RateLimit fields,
// published as one event, and once the flood's keys are idle new clients pass.
func TestMiddleware_SpoofedClientsAreBoundedByMaxKeys(t *testing.T) {
	clk := clock.NewManual()
	var events int
	k := newKeyed(t, clk, ratelimit.Permits(5), ratelimit.Period(time.Second), keyed.Bounds(256, 0),
		ratelimit.OnEvent(func(e policy.Event) { events++ }))
	h := middleware(t, k, resiliencehttp.TrustedProxies(netip.MustParsePrefix("10.0.0.0/8")))(hello)
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
		w := call(netip.AddrFrom4([4]byte{203, 0, byte(i >> 8), byte(i)}).String())
		if w.Code == http.StatusTooManyRequests {
			refused++
			require.NotEmpty(t, w.Header().Get("Retry-After"))
			require.NotEmpty(t, w.Header().Get("RateLimit"))
		} else {
			require.Equal(t, http.StatusOK, w.Code)
		}
	}
	assert.LessOrEqual(t, k.Len(), 256, "memory is bounded")
	assert.Equal(t, refused, events, "one event per refusal")
	if w := call("192.0.2.1"); w.Code == http.StatusTooManyRequests {
		assert.NotEmpty(t, w.Header().Get("Retry-After"), "a refused new client is told when to come back")
	}
	clk.Advance(time.Second)
	assert.Equal(t, http.StatusOK, call("192.0.2.2").Code, "the flood's keys are idle: a new client passes")
	assert.Equal(t, http.StatusOK, call("198.51.100.1").Code)
	assert.LessOrEqual(t, k.Len(), 256)
}

// An admitted request for a known client allocates nothing in the middleware.
func TestMiddleware_AdmittedRequestAllocatesNothing(t *testing.T) {
	k := newKeyed(t, clock.NewManual(), ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second))
	h := middleware(t, k)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
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
	k, err := keyed.New[string](ratelimit.Permits(1), ratelimit.Period(time.Hour), ratelimit.WithClock(clk))
	require.NoError(t, err)
	h := middleware(t, k, resiliencehttp.Exempt("/static/", "/healthz"))(
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

var _ resiliencehttp.KeyedLimiter = (*keyed.Limiter[string])(nil)

// perKeyLimiters is a keyed limiter of the user's own: one *ratelimit.Limiter per key,
// made on first use, in a store of its own (here a map; Redis or another shared store
// in practice).
type perKeyLimiters struct {
	mu    sync.Mutex
	opts  []ratelimit.Option
	cfg   ratelimit.Config
	store map[string]*ratelimit.Limiter
	keys  []string
}

func newPerKeyLimiters(t testing.TB, opts ...ratelimit.Option) *perKeyLimiters {
	l, err := ratelimit.New(opts...)
	require.NoError(t, err)
	return &perKeyLimiters{opts: opts, cfg: l.Config(), store: map[string]*ratelimit.Limiter{}}
}

func (p *perKeyLimiters) Config() ratelimit.Config { return p.cfg }

func (p *perKeyLimiters) Decide(_ context.Context, key string) keyed.Decision {
	p.mu.Lock()
	l := p.store[key]
	if l == nil {
		l, _ = ratelimit.New(p.opts...)
		p.store[key] = l
	}
	p.keys = append(p.keys, key)
	p.mu.Unlock()
	r, err := l.Reserve()
	if err != nil {
		return keyed.Decision{RetryAfter: r.Delay()}
	}
	return keyed.Decision{Admitted: true, Remaining: l.Snapshot().AvailablePermits}
}

// A keyed limiter of the user's own works through the middleware: Middleware takes the
// KeyedLimiter interface, not only *keyed.Limiter (fault: a Redis-backed or custom
// keyed limiter could not be used).
func TestMiddleware_UserKeyedLimiter(t *testing.T) {
	clk := clock.NewManual()
	own := newPerKeyLimiters(t, ratelimit.Permits(10), ratelimit.Period(time.Second), ratelimit.WithClock(clk))
	h, err := resiliencehttp.NewMiddleware(own, resiliencehttp.AlwaysSendHeaders(true))
	require.NoError(t, err)
	srv := h(hello)
	for i := range 10 {
		require.Equal(t, http.StatusOK, statusOf(srv, "192.0.2.1:5000"), "request %d", i+1)
	}
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "[::ffff:192.0.2.1]:5000"
	srv.ServeHTTP(w, r)
	assert.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.Equal(t, "1", w.Header().Get("Retry-After"), "T = 100ms, rounded up")
	assert.Equal(t, `"default";q=10;w=1`, w.Header().Get("RateLimit-Policy"), "from Config()")
	assert.Equal(t, `"default";r=0;t=0`, w.Header().Get("RateLimit"), "this limiter does not report Reset")
	assert.Equal(t, http.StatusOK, statusOf(srv, "[2001:db8:1:2::1]:5000"))
	clk.Advance(100 * time.Millisecond)
	assert.Equal(t, http.StatusOK, statusOf(srv, "192.0.2.1:5000"))
	assert.Equal(t, []string{"192.0.2.1", "2001:db8:1:2::/64"}, slices.Compact(slices.Sorted(slices.Values(own.keys))),
		"the keys the limiter was given")
}

// oddLimiter reports what a careless implementation might: values out of their ranges.
type oddLimiter struct {
	cfg ratelimit.Config
	d   keyed.Decision
}

func (o oddLimiter) Decide(context.Context, string) keyed.Decision { return o.d }
func (o oddLimiter) Config() ratelimit.Config                      { return o.cfg }

// A user's limiter that reports out-of-range values gets sane headers: negative
// durations are 0, Remaining stays within 0..Permits.
func TestMiddleware_UserLimiterValuesAreKeptInRange(t *testing.T) {
	cfg := ratelimit.Config{Permits: 5, Period: time.Second}
	for _, tc := range []struct {
		d                         keyed.Decision
		retryAfter, limit, legacy string
	}{
		{keyed.Decision{Remaining: -3, RetryAfter: -time.Second, Reset: -time.Hour}, "0", `"default";r=0;t=0`, "0"},
		{keyed.Decision{Remaining: 99, RetryAfter: time.Duration(1<<63 - 1), Reset: time.Duration(1<<63 - 1)},
			"9223372037", `"default";r=5;t=9223372037`, "5"},
	} {
		var got time.Duration = -1
		h := middleware(t, oddLimiter{cfg, tc.d}, resiliencehttp.LegacyHeaders("seconds"),
			resiliencehttp.OnReject(func(w http.ResponseWriter, _ *http.Request, retryAfter time.Duration) {
				got = retryAfter
				w.WriteHeader(http.StatusTooManyRequests)
			}))(hello)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		assert.Equal(t, http.StatusTooManyRequests, w.Code)
		assert.Equal(t, tc.retryAfter, w.Header().Get("Retry-After"))
		assert.Equal(t, tc.limit, w.Header().Get("RateLimit"))
		assert.Equal(t, tc.legacy, w.Header().Get("X-RateLimit-Remaining"))
		assert.GreaterOrEqual(t, got, time.Duration(0), "OnReject never sees a negative retryAfter")
	}
}

// LegacyHeaders adds X-RateLimit-Limit, -Remaining and -Reset next to the RateLimit
// fields: Reset a Unix time in seconds by default, or seconds until the reset (fault: no
// way to send the fields older clients read).
func TestMiddleware_LegacyHeaders(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed(t, clk, ratelimit.Permits(2), ratelimit.Period(2500*time.Millisecond)) // T = 1.25s
	h := middleware(t, k, resiliencehttp.LegacyHeaders("unix"))(hello)
	serve := func(h http.Handler) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = "192.0.2.1:5000"
		h.ServeHTTP(w, r)
		return w
	}
	w := serve(h)
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Empty(t, w.Header().Get("X-RateLimit-Limit"), "admitted: none without AlwaysSendHeaders")
	assert.Equal(t, http.StatusOK, serve(h).Code)
	before := time.Now()
	w = serve(h)
	after := time.Now()
	assert.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.Equal(t, "2", w.Header().Get("X-RateLimit-Limit"))
	assert.Equal(t, "0", w.Header().Get("X-RateLimit-Remaining"))
	reset, err := strconv.ParseInt(w.Header().Get("X-RateLimit-Reset"), 10, 64)
	require.NoError(t, err)
	full := 2500 * time.Millisecond // both permits back in 2.5s
	assert.GreaterOrEqual(t, reset, before.Add(full).Unix(), "a Unix time, rounded up")
	assert.LessOrEqual(t, reset, after.Add(full).Unix()+1)
	assert.Equal(t, `"default";r=0;t=3`, w.Header().Get("RateLimit"), "the RateLimit fields stay")
	assert.Equal(t, "2", w.Header().Get("Retry-After"))

	k = newKeyed(t, clk, ratelimit.Permits(2), ratelimit.Period(2500*time.Millisecond))
	h = middleware(t, k, resiliencehttp.LegacyHeaders("seconds"),
		resiliencehttp.AlwaysSendHeaders(true))(hello)
	w = serve(h)
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, []string{"2"}, w.Header().Values("X-RateLimit-Limit"))
	assert.Equal(t, []string{"1"}, w.Header().Values("X-RateLimit-Remaining"))
	assert.Equal(t, []string{"2"}, w.Header().Values("X-RateLimit-Reset"), "1.25s, rounded up")
	serve(h)
	w = serve(h)
	assert.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.Equal(t, "3", w.Header().Get("X-RateLimit-Reset"), "2.5s, rounded up")

	_, err = resiliencehttp.NewMiddleware(k, resiliencehttp.LegacyHeaders("minutes"))
	assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(err))
}

// badConfig is a limiter whose Config() breaks the contract.
type badConfig struct{ cfg ratelimit.Config }

func (b badConfig) Decide(context.Context, string) keyed.Decision {
	return keyed.Decision{Admitted: true}
}
func (b badConfig) Config() ratelimit.Config { return b.cfg }

// Nothing given to the middleware makes it panic: NewMiddleware returns a coded error,
// and a nil next handler answers 500 (fault: Middleware(nil) panicked).
func TestMiddleware_NilOrBadArgumentsDoNotPanic(t *testing.T) {
	var nilKeyed *keyed.Limiter[string]
	for _, tc := range []struct {
		name string
		k    resiliencehttp.KeyedLimiter
		code string
	}{
		{"nil", nil, r4c.BadSpec},
		{"nil *Keyed", nilKeyed, r4c.BadSpec},
		{"nil user limiter", (*perKeyLimiters)(nil), r4c.BadSpec},
		{"zero Keyed", &keyed.Limiter[string]{}, r4c.BadPermits},
		{"permits 0", badConfig{ratelimit.Config{Period: time.Second}}, r4c.BadPermits},
		{"period 0", badConfig{ratelimit.Config{Permits: 1}}, r4c.ZeroPeriod},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mw func(http.Handler) http.Handler
			var err error
			require.NotPanics(t, func() { mw, err = resiliencehttp.NewMiddleware(tc.k) })
			assert.Nil(t, mw)
			assert.Equal(t, tc.code, r4c.CodeOf(err))
		})
	}
	k := newKeyed(t, clock.NewManual(), ratelimit.Permits(1), ratelimit.Period(time.Second))
	for _, next := range []http.Handler{nil, http.HandlerFunc(nil), (*nopHandler)(nil)} {
		w := httptest.NewRecorder()
		require.NotPanics(t, func() {
			middleware(t, k)(next).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		})
		assert.Equal(t, http.StatusInternalServerError, w.Code)
		assert.Contains(t, w.Body.String(), "nil http.Handler")
	}
	require.NotPanics(t, func() {
		h := middleware(t, k, nil, resiliencehttp.KeyFunc(nil), resiliencehttp.OnReject(nil),
			resiliencehttp.TrustedProxies(), resiliencehttp.ForwardedHeader(""), resiliencehttp.PolicyName(""))(hello)
		assert.Equal(t, http.StatusOK, statusOf(h, "192.0.2.1:5000"), "nil options keep the defaults")
		assert.Equal(t, http.StatusTooManyRequests, statusOf(h, "192.0.2.1:5000"))
	})
	_, err := resiliencehttp.ClientIP(nil)
	assert.NoError(t, err)
}

// An exempt path that no request's cleaned path can be, and an invalid trusted proxy, fail
// NewMiddleware with R4C-REG-010 (fault: both were accepted and never took effect: the
// path was never exempt, the proxy never trusted).
func TestMiddleware_BadExemptPathsAndProxiesAreRefused(t *testing.T) {
	k := newKeyed(t, clock.NewManual(), ratelimit.Permits(1), ratelimit.Period(time.Second))
	for path, want := range map[string]string{
		"healthz": "/healthz", "/a//b": "/a/b", "/a/./b": "/a/b", "/static/../api": "/api",
		"static/": "/static/", "/static//": "/static/", "//": "/",
	} {
		_, err := resiliencehttp.NewMiddleware(k, resiliencehttp.Exempt("/ok", path))
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce, path)
		assert.Equal(t, r4c.BadSpec, ce.Code, path)
		assert.Equal(t, "resiliencehttp.exempt", ce.Key)
		assert.Equal(t, path, ce.Value)
		assert.Contains(t, ce.Reason, `write "`+want+`"`, path)
	}
	for _, path := range []string{"/", "/healthz", "/static/", "/a.b/c", "/..x"} {
		_, err := resiliencehttp.NewMiddleware(k, resiliencehttp.Exempt(path))
		assert.NoError(t, err, path)
	}
	_, err := resiliencehttp.NewMiddleware(k, resiliencehttp.TrustedProxies(netip.MustParsePrefix("10.0.0.0/8"), netip.Prefix{}))
	var ce *policy.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, r4c.BadSpec, ce.Code)
	assert.Equal(t, "resiliencehttp.trustedProxies", ce.Key)
}

type nopHandler struct{}

func (*nopHandler) ServeHTTP(http.ResponseWriter, *http.Request) {}

// SPEC RL-29: the Ratelimit-Policy field lists every window of the limiter: its Permits
// per Period, then each of Config().Windows, named after the policy; a Windows list that
// is not permits/period pairs is refused with its code.
func TestMiddleware_PolicyListsEveryWindow(t *testing.T) {
	cfg := ratelimit.Config{Permits: 10, Period: time.Second, Windows: "1000/24h, 90/1m30s"}
	h := middleware(t, oddLimiter{cfg, keyed.Decision{}})(hello)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	assert.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.Equal(t, `"default";q=10;w=1, "default-2";q=1000;w=86400, "default-3";q=90;w=90`,
		w.Header().Get("RateLimit-Policy"))
	for bad, code := range map[string]string{"1000 a day": r4c.BadNumber, "0/1s": r4c.BadPermits, "1/0s": r4c.ZeroPeriod} {
		cfg.Windows = bad
		_, err := resiliencehttp.NewMiddleware(oddLimiter{cfg, keyed.Decision{}})
		assert.Equal(t, code, r4c.CodeOf(err), bad)
	}
}
