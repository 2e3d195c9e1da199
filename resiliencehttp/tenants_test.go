package resiliencehttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	"github.com/resilience4go/resilience4go/resiliencehttp"
)

// request returns a request with the header pairs kv.
func request(kv ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/export", nil)
	for i := 0; i+1 < len(kv); i += 2 {
		r.Header.Set(kv[i], kv[i+1])
	}
	return r
}

// tenantLimit is a PerKey function: tenant "gold" 10 per second, others the limiter's.
func tenantLimit(key string) string {
	if key == "gold" {
		return "10/1s"
	}
	return ""
}

// SPEC HM-7: with per-key limits, each tenant's requests are held to its own limit and
// the fields report its own quota: Ratelimit-Policy and X-RateLimit-Limit say the key's
// permits per period.
func TestHM7_PerTenantLimitsAndTheirHeaders(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed(t, clk, ratelimit.Permits(2), ratelimit.Period(time.Second), keyed.PerKey(tenantLimit))
	h := middleware(t, k, resiliencehttp.KeyFunc(func(r *http.Request) string { return r.Header.Get("X-Tenant") }),
		resiliencehttp.LegacyHeaders("seconds"), resiliencehttp.AlwaysSendHeaders(true))(hello)
	passed := map[string]int{}
	for _, tenant := range []string{"gold", "free"} {
		for range 20 {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, request("X-Tenant", tenant))
			if w.Code == http.StatusOK {
				passed[tenant]++
			}
			want := map[string]string{"gold": "10", "free": "2"}[tenant]
			assert.Equal(t, `"default";q=`+want+`;w=1`, w.Header().Get("Ratelimit-Policy"), tenant)
			assert.Equal(t, want, w.Header().Get("X-Ratelimit-Limit"), tenant)
		}
	}
	assert.Equal(t, map[string]int{"gold": 10, "free": 2}, passed)

	require.NoError(t, k.SetLimit("free", "5/1s"))
	clk.Advance(time.Second)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, request("X-Tenant", "free"))
	assert.Equal(t, http.StatusOK, w.Code, "a live change applies to the next request")
	assert.Equal(t, `"default";q=5;w=1`, w.Header().Get("Ratelimit-Policy"))
	assert.Equal(t, "5", w.Header().Get("X-Ratelimit-Limit"))
}

// SPEC HM-8: Weight makes a request cost its weight in permits, all or none; a weight
// below 1 costs 1, one above the key's burst costs the burst.
func TestHM8_Weight(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed(t, clk, ratelimit.Permits(5), ratelimit.Period(time.Second))
	cost := func(r *http.Request) int { n, _ := strconv.Atoi(r.Header.Get("X-Cost")); return n }
	h := middleware(t, k, resiliencehttp.Weight(cost), resiliencehttp.AlwaysSendHeaders(true))(hello)
	serve := func(c string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, request("X-Cost", c))
		return w
	}
	w := serve("3")
	require.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, `"default";r=2;t=1`, w.Header().Get("Ratelimit"), "3 of 5 taken")
	w = serve("3")
	require.Equal(t, http.StatusTooManyRequests, w.Code, "3 more are not free: none is taken")
	assert.Equal(t, "1", w.Header().Get("Retry-After"))
	assert.Equal(t, `"default";r=0;t=1`, w.Header().Get("Ratelimit"), "a refusal reports none left, as ever")
	assert.Equal(t, http.StatusOK, serve("0").Code, "a weight below 1 costs 1")
	assert.Equal(t, 1, keyedAvailable(k, "192.0.2.1"), "the request's key is its client's")

	clk.Advance(time.Second)
	w = serve("100")
	require.Equal(t, http.StatusOK, w.Code, "more than the burst costs the whole burst, when it is free")
	assert.Equal(t, `"default";r=0;t=1`, w.Header().Get("Ratelimit"))
	assert.Equal(t, http.StatusTooManyRequests, serve("1").Code)

	_, err := resiliencehttp.NewMiddleware(badConfig{ratelimit.Config{Permits: 1, Period: time.Second}},
		resiliencehttp.Weight(cost))
	assert.Equal(t, "R4C-REG-010", r4c.CodeOf(err), "Weight needs DecideN")
}

func keyedAvailable(k *keyed.Limiter[string], key string) int { return k.AvailablePermits(key) }

// SPEC HM-9: NewLimit decides from inside a handler, after authentication: a refused
// request is answered as the middleware answers it, and the handler writes nothing more.
func TestHM9_DecisionInsideTheHandler(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed(t, clk, ratelimit.Permits(2), ratelimit.Period(time.Second), keyed.PerKey(tenantLimit))
	limit, err := resiliencehttp.NewLimit(k)
	require.NoError(t, err)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tenant := r.Header.Get("X-Tenant") // authenticated
		if tenant == "" {
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		n := 1
		if r.URL.Query().Get("bulk") != "" {
			n = 4
		}
		if !limit(w, r, tenant, n) {
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	codes := func(tenant, url string, times int) []int {
		var out []int
		for range times {
			w := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodGet, url, nil)
			r.Header.Set("X-Tenant", tenant)
			h.ServeHTTP(w, r)
			out = append(out, w.Code)
		}
		return out
	}
	assert.Equal(t, []int{200, 200, 429}, codes("free", "/", 3))
	assert.Equal(t, []int{200, 200, 429}, codes("gold", "/?bulk=1", 3), "4 + 4 of gold's 10, then 2 left")
	assert.Equal(t, []int{200, 200, 429}, codes("gold", "/", 3))

	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("X-Tenant", "gold")
	h.ServeHTTP(w, r)
	assert.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.Equal(t, "Too Many Requests\n", w.Body.String(), "the handler wrote nothing more")
	assert.Equal(t, `"default";q=10;w=1`, w.Header().Get("Ratelimit-Policy"))
	assert.Equal(t, "1", w.Header().Get("Retry-After"))

	_, err = resiliencehttp.NewLimit(badConfig{ratelimit.Config{Permits: 1, Period: time.Second}})
	assert.Equal(t, "R4C-REG-010", r4c.CodeOf(err), "NewLimit needs DecideN")
	_, err = resiliencehttp.NewLimit(nil)
	assert.Equal(t, "R4C-REG-010", r4c.CodeOf(err))
}

// An admitted request through NewLimit allocates nothing in it, as through the
// middleware.
func TestHM9_NewLimitAllocatesNothing(t *testing.T) {
	k := newKeyed(t, clock.NewManual(), ratelimit.Permits(1_000_000), ratelimit.Period(time.Second))
	limit, err := resiliencehttp.NewLimit(k)
	require.NoError(t, err)
	w, r := httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil)
	require.True(t, limit(w, r, "t", 2))
	assert.Zero(t, testing.AllocsPerRun(100, func() { limit(w, r, "t", 2); limit(w, r, "t", 1) }))
	_ = context.Background()
}

// SPEC HM-8: the key's burst is the fewest permits of its windows: a weight above it, but
// within Permits, costs that burst too (never a refusal with Retry-After 0 for ever),
// with the limiter's windows, a key's own, and on a disabled limiter.
func TestHM8_WeightAboveAWindowsBurst(t *testing.T) {
	clk := clock.NewManual()
	for name, opts := range map[string][]ratelimit.Option{
		"limiter's": {ratelimit.Permits(10), ratelimit.Period(time.Second), ratelimit.Windows("4/1m")},
		"own": {ratelimit.Permits(10), ratelimit.Period(time.Second), ratelimit.Windows("100/1h"),
			keyed.PerKey(func(string) string { return "10/1s, 4/1m" })},
		"disabled": {ratelimit.Permits(10), ratelimit.Period(time.Second), ratelimit.Windows("4/1m"), ratelimit.Enabled(false)},
	} {
		k := newKeyed(t, clk, opts...)
		h := middleware(t, k, resiliencehttp.Weight(func(*http.Request) int { return 7 }))(hello)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, request())
		require.Equal(t, http.StatusOK, w.Code, "%s: 7 of a burst of 4 costs the 4", name)
		if name == "disabled" {
			continue
		}
		assert.Zero(t, keyedAvailable(k, "192.0.2.1"), name)
		w = httptest.NewRecorder()
		h.ServeHTTP(w, request())
		require.Equal(t, http.StatusTooManyRequests, w.Code, name)
		assert.NotEqual(t, "0", w.Header().Get("Retry-After"), "%s: the burst is free again in time", name)
	}
}
