package resiliencehttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencehttp"
)

// priorityProbe is a user policy that records the priority each call carries.
type priorityProbe struct {
	mu   sync.Mutex
	seen []policy.Priority
}

func (*priorityProbe) Layer() policy.Layer { return "priorityProbe" }

func (p *priorityProbe) Decorate(next policy.Call[string]) policy.Call[string] {
	return func(ctx context.Context) (string, error) {
		p.mu.Lock()
		p.seen = append(p.seen, policy.PriorityFrom(ctx))
		p.mu.Unlock()
		return next(ctx)
	}
}

func (p *priorityProbe) DecorateAsync(next policy.AsyncCall[string]) policy.AsyncCall[string] {
	return next
}

func (p *priorityProbe) last() policy.Priority {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen[len(p.seen)-1]
}

// priorityEcho answers each request with the priority its context carries.
var priorityEcho = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	fmt.Fprint(w, policy.PriorityFrom(r.Context()))
})

func priorityOf(t *testing.T, h http.Handler, r *http.Request) string {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	require.Equal(t, http.StatusOK, w.Code)
	return w.Body.String()
}

func priorityRequest(values ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	for _, v := range values {
		r.Header.Add("X-Request-Priority", v)
	}
	return r
}

// SPEC HM-4: the header's priority, capped at highest; an absent or unreadable value
// leaves the request's context as it was.
func TestHM4_PriorityHeader(t *testing.T) {
	k := newKeyed(t, clock.NewManual(), ratelimit.Permits(1000), ratelimit.Period(time.Second))
	h := middleware(t, k, resiliencehttp.PriorityHeader("x-request-priority", policy.PriorityCritical))(priorityEcho)
	for _, tc := range []struct {
		values []string
		want   policy.Priority
	}{
		{nil, policy.PriorityCritical},
		{[]string{"sheddable"}, policy.PrioritySheddable},
		{[]string{"Sheddable-Plus"}, policy.PrioritySheddablePlus},
		{[]string{"0"}, policy.PrioritySheddable},
		{[]string{"critical"}, policy.PriorityCritical},
		{[]string{"critical_plus"}, policy.PriorityCritical}, // capped
		{[]string{"3"}, policy.PriorityCritical},             // capped
		{[]string{"sheddable", "critical"}, policy.PrioritySheddable},
		{[]string{"urgent"}, policy.PriorityCritical},
		{[]string{""}, policy.PriorityCritical},
		{[]string{"4"}, policy.PriorityCritical},
		{[]string{strings.Repeat(" ", 40) + "sheddable"}, policy.PriorityCritical}, // too long to read
	} {
		assert.Equal(t, tc.want.String(), priorityOf(t, h, priorityRequest(tc.values...)), "%q", tc.values)
	}
	// A priority an outer handler set stays when the header says none.
	r := priorityRequest("urgent")
	r = r.WithContext(policy.WithPriority(r.Context(), policy.PrioritySheddablePlus))
	assert.Equal(t, "sheddable_plus", priorityOf(t, h, r))
	r = priorityRequest("sheddable")
	r = r.WithContext(policy.WithPriority(r.Context(), policy.PrioritySheddablePlus))
	assert.Equal(t, "sheddable", priorityOf(t, h, r), "the header's replaces it")

	// A server that grants critical_plus.
	all := middleware(t, k, resiliencehttp.PriorityHeader("X-Request-Priority", policy.PriorityCriticalPlus))(priorityEcho)
	assert.Equal(t, "critical_plus", priorityOf(t, all, priorityRequest("critical_plus")))
	// One that grants no more than sheddable_plus lowers critical too.
	low := middleware(t, k, resiliencehttp.PriorityHeader("X-Request-Priority", policy.PrioritySheddablePlus))(priorityEcho)
	assert.Equal(t, "sheddable_plus", priorityOf(t, low, priorityRequest("critical")))
	assert.Equal(t, "sheddable", priorityOf(t, low, priorityRequest("sheddable")))
}

// SPEC HM-4: PriorityFunc decides alone, or for the requests whose header names no
// priority; its priority is not capped.
func TestHM4_PriorityFunc(t *testing.T) {
	k := newKeyed(t, clock.NewManual(), ratelimit.Permits(1000), ratelimit.Period(time.Second))
	byPath := func(r *http.Request) policy.Priority {
		switch r.URL.Path {
		case "/batch":
			return policy.PrioritySheddable
		case "/pay":
			return policy.PriorityCriticalPlus
		}
		return policy.PriorityCritical
	}
	h := middleware(t, k, resiliencehttp.PriorityFunc(byPath), resiliencehttp.PriorityFunc(nil))(priorityEcho)
	for path, want := range map[string]string{"/batch": "sheddable", "/pay": "critical_plus", "/": "critical"} {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.Header.Set("X-Request-Priority", "sheddable_plus") // not read
		assert.Equal(t, want, priorityOf(t, h, r), path)
	}

	both := middleware(t, k, resiliencehttp.PriorityFunc(byPath),
		resiliencehttp.PriorityHeader("X-Request-Priority", policy.PriorityCritical))(priorityEcho)
	r := httptest.NewRequest(http.MethodGet, "/pay", nil)
	assert.Equal(t, "critical_plus", priorityOf(t, both, r), "no header: the function's")
	r.Header.Set("X-Request-Priority", "bogus")
	assert.Equal(t, "critical_plus", priorityOf(t, both, r), "a bad value: the function's")
	r.Header.Set("X-Request-Priority", "sheddable_plus")
	assert.Equal(t, "sheddable_plus", priorityOf(t, both, r), "the header's")
	r.Header.Set("X-Request-Priority", "critical_plus")
	assert.Equal(t, "critical", priorityOf(t, both, r), "the header's, capped")

	clamped := middleware(t, k, resiliencehttp.PriorityFunc(func(*http.Request) policy.Priority { return 9 }))(priorityEcho)
	assert.Equal(t, "critical_plus", priorityOf(t, clamped, httptest.NewRequest(http.MethodGet, "/", nil)))
}

// SPEC HM-4: the policies the handler calls through see the request's priority; an
// exempt request gets its priority too; a refused one never reaches the handler.
func TestHM4_PriorityReachesTheHandlersPolicies(t *testing.T) {
	reg, err := resilience.NewRegistry(resilience.WithClock(clock.NewManual()))
	require.NoError(t, err)
	probe := &priorityProbe{}
	lookup, err := resilience.Wrap1(reg, "lookup",
		func(ctx context.Context, q string) (string, error) { return q, nil }, resilience.Use[string](probe))
	require.NoError(t, err)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, _ := lookup(r.Context(), r.URL.Path)
		fmt.Fprint(w, v)
	})
	k := newKeyed(t, clock.NewManual(), ratelimit.Permits(2), ratelimit.Period(time.Hour))
	h := middleware(t, k, resiliencehttp.Exempt("/healthz"),
		resiliencehttp.PriorityHeader("X-Request-Priority", policy.PriorityCriticalPlus))(handler)

	priorityOf(t, h, priorityRequest("sheddable"))
	assert.Equal(t, policy.PrioritySheddable, probe.last())
	priorityOf(t, h, priorityRequest())
	assert.Equal(t, policy.PriorityCritical, probe.last())

	r := httptest.NewRequest(http.MethodGet, "/healthz", nil)
	r.Header.Set("X-Request-Priority", "critical_plus")
	priorityOf(t, h, r)
	assert.Equal(t, policy.PriorityCriticalPlus, probe.last(), "exempt")

	w := httptest.NewRecorder()
	h.ServeHTTP(w, priorityRequest("critical_plus"))
	assert.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.Len(t, probe.seen, 3, "the refused request reached no policy")
}

// PriorityHeader's name and highest are checked: R4C-REG-010, R4C-ATR-007.
func TestPriorityHeader_BadConfiguration(t *testing.T) {
	k := newKeyed(t, clock.NewManual(), ratelimit.Permits(1), ratelimit.Period(time.Second))
	for _, name := range []string{"", "X Priority", "X-Priority:", "Priorité", "a\r\nb"} {
		_, err := resiliencehttp.NewMiddleware(k, resiliencehttp.PriorityHeader(name, policy.PriorityCritical))
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce, "%q", name)
		assert.Equal(t, r4c.BadSpec, ce.Code, "%q", name)
		assert.Equal(t, "resiliencehttp.priorityHeader", ce.Key)
	}
	for _, highest := range []policy.Priority{-1, 4} {
		_, err := resiliencehttp.NewMiddleware(k, resiliencehttp.PriorityHeader("X-Request-Priority", highest))
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce, "%d", highest)
		assert.Equal(t, r4c.OutOfRange, ce.Code)
	}
	for _, name := range []string{"X-Request-Priority", "priority.v1", "x_prio"} {
		_, err := resiliencehttp.NewMiddleware(k, resiliencehttp.PriorityHeader(name, policy.PrioritySheddable))
		assert.NoError(t, err, name)
	}
}

// SPEC HM-5: without the options, and when the priority is the context's, nothing is
// allocated; a request given another priority costs its context and its copy.
func TestHM5_PriorityAllocations(t *testing.T) {
	k := newKeyed(t, clock.NewManual(), ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second))
	h := middleware(t, k, resiliencehttp.PriorityHeader("X-Request-Priority", policy.PriorityCritical))(&nopHandler{})
	w := &nopWriter{h: http.Header{}}
	for value, want := range map[string]float64{"": 0, "critical": 0, "critical_plus": 0, "sheddable": 2, "1": 2} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = "203.0.113.7:51234"
		if value != "" {
			r.Header.Set("X-Request-Priority", value)
		}
		h.ServeHTTP(w, r)
		assert.Equal(t, want, testing.AllocsPerRun(1000, func() { h.ServeHTTP(w, r) }), "%q", value)
	}
}

// SPEC HM-5: PriorityFunc's value outside the levels is the nearest level: when that is
// the request's context's priority, the request goes on as is, allocating nothing.
func TestHM5_PriorityFuncOutsideTheLevelsThatIsTheContexts(t *testing.T) {
	k := newKeyed(t, clock.NewManual(), ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second))
	for _, tc := range []struct {
		fn, ctx policy.Priority
	}{{7, policy.PriorityCriticalPlus}, {-3, policy.PrioritySheddable}, {policy.PriorityCritical, policy.PriorityCritical}} {
		opt := resiliencehttp.PriorityFunc(func(*http.Request) policy.Priority { return tc.fn })
		h := middleware(t, k, opt)(&nopHandler{})
		w := &nopWriter{h: http.Header{}}
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = "203.0.113.7:51234"
		r = r.WithContext(policy.WithPriority(r.Context(), tc.ctx))
		assert.Equal(t, tc.ctx.String(), priorityOf(t, middleware(t, k, opt)(priorityEcho), r), "PriorityFunc %d", tc.fn)
		assert.Zero(t, testing.AllocsPerRun(1000, func() { h.ServeHTTP(w, r) }), "PriorityFunc %d", tc.fn)
	}
}

// Requests of every priority at once, through a real server: each handler sees its own.
func TestPriorityHeader_Concurrent(t *testing.T) {
	k := newKeyed(t, clock.System(), ratelimit.Permits(1_000_000), ratelimit.Period(time.Second))
	srv := serve(t, middleware(t, k, resiliencehttp.PriorityHeader("X-Request-Priority", policy.PriorityCriticalPlus))(priorityEcho))
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			p := policy.Priority(i % 4)
			req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
			if !assert.NoError(t, err) {
				return
			}
			req.Header.Set("X-Request-Priority", p.String())
			resp, err := srv.Client().Do(req)
			if !assert.NoError(t, err) {
				return
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			assert.NoError(t, err)
			assert.Equal(t, p.String(), string(body))
		})
	}
	wg.Wait()
}

// SPEC HM-6: a transport with a PriorityHeader sends each attempt with its context's
// priority, unless the request sets the header; the caller's request is not changed.
func TestHM6_TransportSendsThePriority(t *testing.T) {
	reg, err := resilience.NewRegistry()
	require.NoError(t, err)
	var mu sync.Mutex
	var sent []string
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		sent = append(sent, strings.Join(r.Header.Values("X-Request-Priority"), ","))
		mu.Unlock()
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
	})
	tr, err := resiliencehttp.NewTransport(reg, "api", base,
		resiliencehttp.TransportConfig{PriorityHeader: "x-request-priority"})
	require.NoError(t, err)
	send := func(ctx context.Context, h http.Header) *http.Request {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://example.test/", nil)
		require.NoError(t, err)
		req.Header = h
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		return req
	}
	req := send(policy.WithPriority(context.Background(), policy.PrioritySheddable), http.Header{"Accept": {"*/*"}})
	assert.Equal(t, http.Header{"Accept": {"*/*"}}, req.Header, "the caller's header is unchanged")
	send(context.Background(), nil)
	send(policy.WithPriority(context.Background(), policy.PrioritySheddable),
		http.Header{"X-Request-Priority": {"critical_plus"}})
	assert.Equal(t, []string{"sheddable", "critical", "critical_plus"}, sent)

	// The server's middleware reads what the transport sends.
	k := newKeyed(t, clock.System(), ratelimit.Permits(1000), ratelimit.Period(time.Second))
	srv := serve(t, middleware(t, k, resiliencehttp.PriorityHeader("X-Request-Priority", policy.PriorityCritical))(priorityEcho))
	client, err := resiliencehttp.NewTransport(reg, "echo", srv.Client().Transport,
		resiliencehttp.TransportConfig{PriorityHeader: "X-Request-Priority"})
	require.NoError(t, err)
	for _, p := range []policy.Priority{policy.PrioritySheddable, policy.PrioritySheddablePlus, policy.PriorityCriticalPlus} {
		req, err := http.NewRequestWithContext(policy.WithPriority(context.Background(), p), http.MethodGet, srv.URL, nil)
		require.NoError(t, err)
		resp, err := (&http.Client{Transport: client}).Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, min(p, policy.PriorityCritical).String(), string(body))
	}

	_, err = resiliencehttp.NewTransport(reg, "bad", base, resiliencehttp.TransportConfig{PriorityHeader: "X Priority"})
	var ce *policy.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, r4c.BadSpec, ce.Code)
}

// What sending the priority costs the transport, per attempt.
func TestHM6_TransportPriorityAllocations(t *testing.T) {
	reg, err := resilience.NewRegistry()
	require.NoError(t, err)
	resp := &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}
	base := roundTripFunc(func(*http.Request) (*http.Response, error) { return resp, nil })
	allocs := func(id string, cfg resiliencehttp.TransportConfig) float64 {
		tr, err := resiliencehttp.NewTransport(reg, id, base, cfg)
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodGet, "http://example.test/", nil)
		require.NoError(t, err)
		req.Header.Set("Accept", "*/*")
		return testing.AllocsPerRun(200, func() { _, _ = tr.RoundTrip(req) })
	}
	without := allocs("without", resiliencehttp.TransportConfig{})
	with := allocs("with", resiliencehttp.TransportConfig{PriorityHeader: "X-Request-Priority"})
	t.Logf("RoundTrip: %v allocations, %v with the priority header", without, with)
	assert.LessOrEqual(t, with-without, 2.0)
}
