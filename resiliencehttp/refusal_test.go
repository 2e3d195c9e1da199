package resiliencehttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	"github.com/resilience4go/resilience4go/resiliencehttp"
)

// refusedRequest returns a request from one IPv4 client, and its handler h with the
// client's quota already spent: every further request from it is refused.
func refusedRequest(t *testing.T, k *keyed.Limiter[string], opts ...resiliencehttp.MiddlewareOption) (http.Handler, *http.Request) {
	t.Helper()
	h := middleware(t, k, opts...)(hello)
	r := httptest.NewRequest(http.MethodGet, "/v1/items", nil)
	r.RemoteAddr = "203.0.113.7:51234"
	for range k.Config().Permits {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, http.StatusOK, w.Code)
	}
	return h, r
}

// SPEC HM-1: the default refusal is http.Error's 429, byte for byte: the status, the
// text body, Content-Type and X-Content-Type-Options set, a Content-Length that an outer
// middleware set removed; with the rate-limit fields before it. Fields set earlier
// that the middleware does not own stay.
func TestHM1_DefaultRefusalIsHTTPErrors429(t *testing.T) {
	clk := clock.NewManual()
	for _, tc := range []struct {
		name string
		opts []resiliencehttp.MiddlewareOption
		want http.Header
	}{
		{"default", nil, http.Header{
			"Retry-After":      {"10"},
			"Ratelimit-Policy": {`"default";q=1;w=10`},
			"Ratelimit":        {`"default";r=0;t=10`},
		}},
		{"legacy", []resiliencehttp.MiddlewareOption{resiliencehttp.LegacyHeaders("seconds"), resiliencehttp.PolicyName("p")}, http.Header{
			"Retry-After":           {"10"},
			"Ratelimit-Policy":      {`"p";q=1;w=10`},
			"Ratelimit":             {`"p";r=0;t=10`},
			"X-Ratelimit-Limit":     {"1"},
			"X-Ratelimit-Remaining": {"0"},
			"X-Ratelimit-Reset":     {"10"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKeyed(t, clk, ratelimit.Permits(1), ratelimit.Period(10*time.Second))
			h, r := refusedRequest(t, k, tc.opts...)

			// The reference: the fields, then http.Error, as the middleware did before.
			ref := httptest.NewRecorder()
			for key, v := range tc.want {
				ref.Header()[key] = v
			}
			ref.Header().Set("Content-Length", "42")
			ref.Header().Set("Content-Type", "application/json")
			ref.Header().Set("X-Request-Id", "abc")
			http.Error(ref, http.StatusText(http.StatusTooManyRequests), http.StatusTooManyRequests)

			w := httptest.NewRecorder()
			w.Header().Set("Content-Length", "42")
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Request-Id", "abc")
			h.ServeHTTP(w, r)
			assert.Equal(t, ref.Code, w.Code)
			assert.Equal(t, ref.Body.String(), w.Body.String())
			assert.Equal(t, "Too Many Requests\n", w.Body.String())
			assert.Equal(t, ref.Header(), w.Header())
			assert.Equal(t, "text/plain; charset=utf-8", w.Header().Get("Content-Type"))
			assert.Equal(t, "nosniff", w.Header().Get("X-Content-Type-Options"))
			assert.Empty(t, w.Header().Values("Content-Length"))
			assert.Equal(t, "abc", w.Header().Get("X-Request-Id"))
		})
	}
}

// SPEC HM-2: a refused request, keyed by its client's IPv4 address, costs at most 3
// allocations in the middleware (it costs 1: the slice of its header values), with the
// default answer, with the legacy fields, and with an OnReject hook; the admitted path
// keeps its count, 0 by default, and costs 2 with AlwaysSendHeaders (4 to 8 before).
func TestHM2_RefusalAllocatesAtMostThree(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []resiliencehttp.MiddlewareOption
	}{
		{"default", nil},
		{"legacy unix time", []resiliencehttp.MiddlewareOption{resiliencehttp.LegacyHeaders("unix")}},
		{"legacy seconds", []resiliencehttp.MiddlewareOption{resiliencehttp.LegacyHeaders("seconds")}},
		{"OnReject", []resiliencehttp.MiddlewareOption{resiliencehttp.OnReject(func(w http.ResponseWriter, _ *http.Request, _ time.Duration) {
			w.WriteHeader(http.StatusTooManyRequests)
		})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A long period: the refusals of the run say the same whole seconds.
			k := newKeyed(t, clock.NewManual(), ratelimit.Permits(1), ratelimit.Period(time.Hour))
			h, r := refusedRequest(t, k, tc.opts...)
			w := &nopWriter{h: http.Header{}}
			h.ServeHTTP(w, r)
			require.Equal(t, "3600", w.h.Get("Retry-After"))
			allocs := testing.AllocsPerRun(1000, func() {
				clear(w.h)
				h.ServeHTTP(w, r)
			})
			assert.LessOrEqual(t, allocs, 3.0, "the target")
			assert.Equal(t, 1.0, allocs, "the slice of the response's header values")
		})
	}
}

// stepping refuses every call, each with a Retry-After one second longer than the last.
type stepping struct{ n int }

func (s *stepping) Decide(context.Context, string) keyed.Decision {
	s.n++
	d := time.Duration(s.n) * time.Second
	return keyed.Decision{Limit: 1, RetryAfter: d, Reset: d}
}

func (*stepping) Config() ratelimit.Config { return ratelimit.Config{Permits: 1, Period: time.Second} }

// SPEC HM-2: a refusal that says other seconds than the last one, so that it formats its
// values anew, still costs at most 3 allocations: the values, the string they are cut
// from, and the slice of the response's header values.
func TestHM2_RefusalWithNewValuesAllocatesAtMostThree(t *testing.T) {
	h := middleware(t, &stepping{}, resiliencehttp.LegacyHeaders("seconds"))(noop)
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "203.0.113.7:51234"
	w := &nopWriter{h: http.Header{}}
	h.ServeHTTP(w, r)
	require.Equal(t, "1", w.h.Get("Retry-After"))
	h.ServeHTTP(w, r)
	require.Equal(t, "2", w.h.Get("Retry-After"))
	require.Equal(t, `"default";r=0;t=2`, w.h.Get("Ratelimit"))
	require.Equal(t, "2", w.h.Get("X-Ratelimit-Reset"))
	assert.Equal(t, 3.0, testing.AllocsPerRun(1000, func() {
		clear(w.h)
		h.ServeHTTP(w, r)
	}))
}

func TestHM2_AdmittedAllocations(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   []resiliencehttp.MiddlewareOption
		allocs float64
	}{
		{"default", nil, 0},
		{"AlwaysSendHeaders", []resiliencehttp.MiddlewareOption{resiliencehttp.AlwaysSendHeaders(true)}, 2},
		{"AlwaysSendHeaders legacy seconds", []resiliencehttp.MiddlewareOption{resiliencehttp.AlwaysSendHeaders(true),
			resiliencehttp.LegacyHeaders("seconds")}, 2},
		{"AlwaysSendHeaders legacy unix time", []resiliencehttp.MiddlewareOption{resiliencehttp.AlwaysSendHeaders(true),
			resiliencehttp.LegacyHeaders("unix")}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKeyed(t, clock.NewManual(), ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second))
			h := middleware(t, k, tc.opts...)(noop)
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = "203.0.113.7:51234"
			w := &nopWriter{h: http.Header{}}
			h.ServeHTTP(w, r)
			assert.Equal(t, tc.allocs, testing.AllocsPerRun(1000, func() {
				clear(w.h)
				h.ServeHTTP(w, r)
			}))
		})
	}
}

// SPEC HM-3: the refusals share their formatted field values while they say the same
// whole seconds, and get new ones exactly when the second changes: Retry-After and the
// Ratelimit field's t are the time until the next permit (here also until the full
// quota), rounded up, read at each request.
func TestHM3_SharedValuesChangeExactlyWhenTheSecondChanges(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed(t, clk, ratelimit.Permits(1), ratelimit.Period(10*time.Second))
	h, r := refusedRequest(t, k) // the permit taken at 0: the next at 10s
	var last *byte
	lastSecs := int64(-1)
	for _, at := range []time.Duration{
		0, time.Nanosecond, 500 * time.Millisecond, time.Second - time.Nanosecond,
		time.Second, time.Second + time.Nanosecond, 1999 * time.Millisecond, 2 * time.Second,
		5*time.Second + 1, 9 * time.Second, 10*time.Second - 1,
	} {
		clk.AdvanceTo(at)
		secs := int64((10*time.Second - at + time.Second - 1) / time.Second)
		w := &nopWriter{h: http.Header{}}
		h.ServeHTTP(w, r)
		require.Equal(t, strconv.FormatInt(secs, 10), w.h.Get("Retry-After"), "at %v", at)
		rl := w.h.Get("Ratelimit")
		require.Equal(t, `"default";r=0;t=`+strconv.FormatInt(secs, 10), rl, "at %v", at)
		if secs == lastSecs {
			assert.Same(t, last, unsafe.StringData(rl), "at %v: the same second shares the value", at)
		} else {
			assert.NotSame(t, last, unsafe.StringData(rl), "at %v: a new second, a new value", at)
		}
		last, lastSecs = unsafe.StringData(rl), secs
	}
	clk.AdvanceTo(10 * time.Second)
	w := &nopWriter{h: http.Header{}}
	h.ServeHTTP(w, r)
	assert.Empty(t, w.h.Get("Retry-After"), "admitted at 10s")
}

// SPEC HM-3: a response's header values are its own: an OnReject hook, or a middleware
// outside, that changes them in place or appends to them changes no other response. The
// hook sees the fields set.
func TestHM3_ChangingOneResponsesHeaderReachesNoOther(t *testing.T) {
	k := newKeyed(t, clock.NewManual(), ratelimit.Permits(1), ratelimit.Period(10*time.Second))
	scribble := func(h http.Header) {
		for key, v := range h {
			for i := range v {
				v[i] = "scribbled"
			}
			h[key] = append(v, "more")
		}
	}
	var seen []http.Header
	hooked, r := refusedRequest(t, k, resiliencehttp.LegacyHeaders("seconds"),
		resiliencehttp.OnReject(func(w http.ResponseWriter, _ *http.Request, retryAfter time.Duration) {
			assert.Equal(t, 10*time.Second, retryAfter)
			seen = append(seen, w.Header().Clone())
			scribble(w.Header())
			w.WriteHeader(http.StatusTooManyRequests)
		}))
	want := http.Header{
		"Retry-After":           {"10"},
		"Ratelimit-Policy":      {`"default";q=1;w=10`},
		"Ratelimit":             {`"default";r=0;t=10`},
		"X-Ratelimit-Limit":     {"1"},
		"X-Ratelimit-Remaining": {"0"},
		"X-Ratelimit-Reset":     {"10"},
	}
	for range 3 {
		hooked.ServeHTTP(&nopWriter{h: http.Header{}}, r)
	}
	require.Len(t, seen, 3)
	for _, h := range seen {
		assert.Equal(t, want, h)
	}

	inner := middleware(t, k)(hello)
	outer := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(w, r)
		scribble(w.Header())
	})
	for range 3 {
		w := httptest.NewRecorder()
		outer.ServeHTTP(w, r)
		assert.Equal(t, http.StatusTooManyRequests, w.Code)
		assert.Equal(t, http.Header{
			"Retry-After":            {"10"},
			"Ratelimit-Policy":       {`"default";q=1;w=10`},
			"Ratelimit":              {`"default";r=0;t=10`},
			"Content-Type":           {"text/plain; charset=utf-8"},
			"X-Content-Type-Options": {"nosniff"},
		}, w.Result().Header, "as written")
	}
}

// SPEC HM-3: refusals served concurrently while the clock moves each carry the values of
// one second: Retry-After is the Ratelimit field's t (one permit per period: the next
// permit is the full quota), never a mix of two.
func TestHM3_ConcurrentRefusalsCarryOneSecondsValues(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Hour))
	h, r := refusedRequest(t, k)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var bad sync.Map
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &nopWriter{h: http.Header{}}
			for {
				select {
				case <-stop:
					return
				default:
				}
				clear(w.h)
				h.ServeHTTP(w, r)
				ra, rl := w.h.Get("Retry-After"), w.h.Get("Ratelimit")
				if !strings.HasSuffix(rl, ";t="+ra) || ra == "" {
					bad.Store(ra+" "+rl, true)
				}
			}
		}()
	}
	for range 2000 {
		clk.Advance(100 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	bad.Range(func(k, _ any) bool {
		t.Errorf("inconsistent fields: %v", k)
		return true
	})
}
