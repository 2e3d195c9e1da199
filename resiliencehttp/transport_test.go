package resiliencehttp_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencehttp"
)

// script is a server that answers its requests with steps, in order (the last step
// repeats), recording each request's body and counting new connections.
type script struct {
	mu     sync.Mutex
	steps  []http.HandlerFunc
	bodies []string
	conns  atomic.Int32
	srv    *httptest.Server
}

func newScript(t testing.TB, steps ...http.HandlerFunc) *script {
	t.Helper()
	s := &script{steps: steps}
	s.srv = httptest.NewUnstartedServer(s)
	s.srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.srv.Start()
	t.Cleanup(s.srv.Close)
	return s
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	i := len(s.bodies)
	s.bodies = append(s.bodies, string(b))
	s.mu.Unlock()
	s.steps[min(i, len(s.steps)-1)](w, r)
}

// requests returns the bodies of the requests served so far.
func (s *script) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...)
}

// status answers code with body and the header pairs.
func status(code int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

// counting wraps a RoundTripper and counts the response bodies it hands out and those
// closed: every body opened must be closed.
type counting struct {
	next           http.RoundTripper
	sent           atomic.Int32
	opened, closed atomic.Int32
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.sent.Add(1)
	resp, err := c.next.RoundTrip(r)
	if err == nil {
		c.opened.Add(1)
		resp.Body = &countedBody{ReadCloser: resp.Body, c: c}
	}
	return resp, err
}

type countedBody struct {
	io.ReadCloser
	c    *counting
	once sync.Once
}

func (b *countedBody) Close() error {
	b.once.Do(func() { b.c.closed.Add(1) })
	return b.ReadCloser.Close()
}

// fixture is a manual-clock registry and a counting base transport.
type fixture struct {
	clk  *clock.Manual
	reg  *resilience.Registry
	base *http.Transport
	rt   *counting
}

func newFixture(t testing.TB, opts ...resilience.RegistryOption) *fixture {
	t.Helper()
	clk := clock.NewManual()
	reg, err := resilience.NewRegistry(append([]resilience.RegistryOption{resilience.WithClock(clk)}, opts...)...)
	require.NoError(t, err)
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	return &fixture{clk: clk, reg: reg, base: base, rt: &counting{next: base}}
}

func (f *fixture) client(t testing.TB, cfg resiliencehttp.TransportConfig, specs ...resilience.Spec) *http.Client {
	t.Helper()
	tr, err := resiliencehttp.NewTransport(f.reg, "api", f.rt, cfg, specs...)
	require.NoError(t, err)
	return &http.Client{Transport: tr}
}

// assertNoLeak checks that every response body the base transport handed out was closed.
func (f *fixture) assertNoLeak(t testing.TB) {
	t.Helper()
	assert.Equal(t, f.rt.opened.Load(), f.rt.closed.Load(), "every response body is closed")
}

func readAll(t testing.TB, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	return string(b)
}

// A server that answers 429 with Retry-After: 2 and then 200: the client succeeds after
// exactly 2s of clock time, on one connection (the 429's body was drained and closed).
func TestTransport_429RetryAfter2_SucceedsAfterExactly2s(t *testing.T) {
	var events []policy.Event
	f := newFixture(t, resilience.WithEventListener(func(e policy.Event) { events = append(events, e) }))
	s := newScript(t, status(http.StatusTooManyRequests, "slow down", "Retry-After", "2"), status(http.StatusOK, "ok"))
	c := f.client(t, resiliencehttp.TransportConfig{}, resilience.Retry(retry.MaxAttempts(3), retry.Delay(100*time.Millisecond)))

	start := f.clk.Now()
	resp, err := c.Get(s.srv.URL)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "ok", readAll(t, resp))
	assert.Equal(t, 2*time.Second, f.clk.Now()-start, "Retry-After, not the retry's 100ms delay")
	assert.Len(t, s.requests(), 2)
	assert.EqualValues(t, 1, s.conns.Load(), "the connection was reused")
	f.assertNoLeak(t)

	require.NotEmpty(t, events)
	assert.Equal(t, retry.EventAttempt, events[0].Kind)
	assert.Equal(t, 2*time.Second, events[0].Wait)
	assert.ErrorIs(t, events[0].Err, resiliencehttp.ErrNotFailure)
	var se *resiliencehttp.StatusError
	require.ErrorAs(t, events[0].Err, &se)
	assert.Equal(t, http.StatusTooManyRequests, se.Response().StatusCode)
	assert.Equal(t, "resiliencehttp: GET "+s.srv.URL+": 429 Too Many Requests", se.Error())
}

// A Retry-After given as an HTTP date is taken relative to the response's Date.
func TestTransport_RetryAfterHTTPDate(t *testing.T) {
	f := newFixture(t)
	date := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	s := newScript(t, status(http.StatusServiceUnavailable, "", "Date", date.Format(http.TimeFormat),
		"Retry-After", date.Add(3*time.Second).Format(http.TimeFormat)), status(http.StatusOK, "ok"))
	c := f.client(t, resiliencehttp.TransportConfig{}, resilience.Retry(retry.MaxAttempts(2)))
	resp, err := c.Get(s.srv.URL)
	require.NoError(t, err)
	assert.Equal(t, "ok", readAll(t, resp))
	assert.Equal(t, 3*time.Second, f.clk.Now())
	f.assertNoLeak(t)
}

// A POST body is replayed intact on retry (GetBody); no response body leaks.
func TestTransport_PostBodyIsReplayedIntact(t *testing.T) {
	f := newFixture(t)
	echo := func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "created") }
	s := newScript(t, status(http.StatusServiceUnavailable, "busy"), status(http.StatusTooManyRequests, "later"), echo)
	c := f.client(t, resiliencehttp.TransportConfig{}, resilience.Retry(retry.MaxAttempts(3), retry.Delay(time.Second)))

	payload := strings.Repeat(`{"item":"widget","qty":3}`, 1000)
	resp, err := c.Post(s.srv.URL, "application/json", strings.NewReader(payload))
	require.NoError(t, err)
	assert.Equal(t, "created", readAll(t, resp))
	assert.Equal(t, []string{payload, payload, payload}, s.requests(), "each attempt sent the whole body")
	assert.Equal(t, 2*time.Second, f.clk.Now(), "two waits of the retry's delay")
	assert.EqualValues(t, 1, s.conns.Load(), "one connection for the three attempts")
	f.assertNoLeak(t)
}

// A body that cannot be replayed (no GetBody) is sent once: the 503 is the answer.
func TestTransport_BodyWithoutGetBodyIsNotRetried(t *testing.T) {
	f := newFixture(t)
	s := newScript(t, status(http.StatusServiceUnavailable, "busy"), status(http.StatusOK, "ok"))
	c := f.client(t, resiliencehttp.TransportConfig{}, resilience.Retry(retry.MaxAttempts(3)))

	req, err := http.NewRequest(http.MethodPut, s.srv.URL, io.NopCloser(strings.NewReader("once")))
	require.NoError(t, err)
	require.Nil(t, req.GetBody)
	resp, err := c.Do(req)
	require.NoError(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "busy", readAll(t, resp))
	assert.Equal(t, []string{"once"}, s.requests())
	assert.Zero(t, f.clk.Now(), "no wait")
	f.assertNoLeak(t)
}

// When the retries are spent, the caller gets the last response, with its whole body,
// even one longer than the transport buffers; the earlier ones were closed.
func TestTransport_RetriesSpent_LastResponseIsReturned(t *testing.T) {
	for _, size := range []int{10, 100_000} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			f := newFixture(t)
			n := 0
			s := newScript(t, func(w http.ResponseWriter, r *http.Request) {
				n++
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = io.WriteString(w, strconv.Itoa(n)+strings.Repeat(".", size))
			})
			c := f.client(t, resiliencehttp.TransportConfig{MaxBufferedBody: 1000}, resilience.Retry(retry.MaxAttempts(3)))
			resp, err := c.Get(s.srv.URL)
			require.NoError(t, err, "a 503 is an answer, not an error")
			assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
			assert.Equal(t, "3"+strings.Repeat(".", size), readAll(t, resp))
			assert.Len(t, s.requests(), 3)
			f.assertNoLeak(t)
		})
	}
}

// The breaker built with CircuitBreaker counts 5xx responses as failures but not 4xx
// ones; the caller still gets every response.
func TestTransport_BreakerCounts5xxButNot4xx(t *testing.T) {
	f := newFixture(t)
	s := newScript(t, func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.URL.Query().Get("status"))
		w.WriteHeader(code)
	})
	c := f.client(t, resiliencehttp.TransportConfig{},
		resilience.CircuitBreaker(circuitbreaker.IgnoreOn(resiliencehttp.ErrNotFailure, ratelimit.ErrExceeded), circuitbreaker.SlidingWindowSize(4), circuitbreaker.MinimumCalls(4),
			circuitbreaker.FailureRateThreshold(100), circuitbreaker.WaitInOpen(time.Minute)))
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](f.reg, circuitbreaker.Layer, "api")
	require.NoError(t, err)
	call := func(code int) (int, error) {
		resp, err := c.Get(s.srv.URL + "/?status=" + strconv.Itoa(code))
		if err != nil {
			return 0, err
		}
		_ = readAll(t, resp)
		return resp.StatusCode, nil
	}
	for _, code := range []int{429, 404, 400, 429, 404, 429, 403, 200} {
		got, err := call(code)
		require.NoError(t, err)
		assert.Equal(t, code, got)
	}
	assert.Equal(t, circuitbreaker.Closed, cb.Snapshot().State, "4xx responses do not open the breaker")
	for i := range 4 {
		assert.Equal(t, circuitbreaker.Closed, cb.Snapshot().State, "%d failures of 4", i)
		got, err := call(500 + i)
		require.NoError(t, err)
		assert.Equal(t, 500+i, got)
	}
	assert.Equal(t, circuitbreaker.Open, cb.Snapshot().State, "5xx responses do")
	served := len(s.requests())
	_, err = call(200)
	assert.ErrorIs(t, err, circuitbreaker.ErrOpen)
	assert.Len(t, s.requests(), served, "an open breaker does not call the server")
	f.assertNoLeak(t)
}

// Which statuses are failures is the user's choice (TransportConfig.Failure); with
// resilience.CircuitBreaker instead of this package's, 429 counts too.
func TestTransport_FailureIsConfigurable(t *testing.T) {
	s := newScript(t, func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.URL.Query().Get("status"))
		w.WriteHeader(code)
	})
	breaker := []circuitbreaker.Option{circuitbreaker.SlidingWindowSize(2), circuitbreaker.MinimumCalls(2)}
	for _, tc := range []struct {
		name  string
		cfg   resiliencehttp.TransportConfig
		spec  resilience.Spec
		codes []int
	}{
		{"404 a failure", resiliencehttp.TransportConfig{Failure: func(s int) bool { return s >= 400 }},
			resilience.CircuitBreaker(append([]circuitbreaker.Option{circuitbreaker.IgnoreOn(resiliencehttp.ErrNotFailure, ratelimit.ErrExceeded)}, breaker...)...), []int{404, 404}},
		{"plain breaker counts 429", resiliencehttp.TransportConfig{}, resilience.CircuitBreaker(breaker...), []int{429, 429}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			c := f.client(t, tc.cfg, tc.spec)
			for _, code := range tc.codes {
				resp, err := c.Get(s.srv.URL + "/?status=" + strconv.Itoa(code))
				require.NoError(t, err)
				assert.Equal(t, code, resp.StatusCode)
				_ = readAll(t, resp)
			}
			cb, err := resilience.Lookup[*circuitbreaker.Breaker](f.reg, circuitbreaker.Layer, "api")
			require.NoError(t, err)
			assert.Equal(t, circuitbreaker.Open, cb.Snapshot().State)
			f.assertNoLeak(t)
		})
	}
}

// hangUp closes the connection without an answer: a transport error.
func hangUp(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

// Transport errors are retried for idempotent requests, for requests with an
// Idempotency-Key, and for any request with RetryNonIdempotent; a plain POST is not
// retried, as it may have reached the server.
func TestTransport_TransportErrorsAreRetriedWhenSafe(t *testing.T) {
	for _, tc := range []struct {
		name, method, key string
		anyMethod         bool
		retried           bool
	}{
		{"GET", http.MethodGet, "", false, true},
		{"DELETE", http.MethodDelete, "", false, true},
		{"POST", http.MethodPost, "", false, false},
		{"POST with Idempotency-Key", http.MethodPost, "k-123", false, true},
		{"POST, RetryNonIdempotent", http.MethodPost, "", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.base.DisableKeepAlives = true // a new connection each time: net/http does not retry on its own
			s := newScript(t, hangUp, status(http.StatusOK, "ok"))
			c := f.client(t, resiliencehttp.TransportConfig{RetryNonIdempotent: tc.anyMethod},
				resilience.Retry(retry.MaxAttempts(2)))
			req, err := http.NewRequest(tc.method, s.srv.URL, strings.NewReader("payload"))
			require.NoError(t, err)
			if tc.key != "" {
				req.Header.Set("Idempotency-Key", tc.key)
			}
			resp, err := c.Do(req)
			if tc.retried {
				require.NoError(t, err)
				assert.Equal(t, "ok", readAll(t, resp))
				assert.Equal(t, []string{"payload", "payload"}, s.requests())
			} else {
				require.Error(t, err)
				var nr policy.NeverRetried
				assert.False(t, errors.As(err, &nr), "the caller gets the transport's own error")
				assert.Len(t, s.requests(), 1)
			}
			f.assertNoLeak(t)
		})
	}
}

// A client that must stay under 10 requests per second: the 11th request within a second
// waits its turn (or, without MaxWait, fails with the limiter's rejection without reaching
// the server).
func TestTransport_ClientRateLimiterKeepsWithinTheQuota(t *testing.T) {
	for _, wait := range []bool{false, true} {
		t.Run("maxWait="+strconv.FormatBool(wait), func(t *testing.T) {
			f := newFixture(t)
			s := newScript(t, status(http.StatusOK, "ok"))
			opts := []ratelimit.Option{ratelimit.Permits(10), ratelimit.Period(time.Second)}
			if wait {
				opts = append(opts, ratelimit.MaxWait(time.Second))
			}
			c := f.client(t, resiliencehttp.TransportConfig{}, resilience.RateLimiter(opts...))
			for range 10 {
				resp, err := c.Get(s.srv.URL)
				require.NoError(t, err)
				_ = readAll(t, resp)
			}
			resp, err := c.Get(s.srv.URL)
			if wait {
				require.NoError(t, err)
				_ = readAll(t, resp)
				assert.Equal(t, 100*time.Millisecond, f.clk.Now(), "waited for the next permit")
				assert.Len(t, s.requests(), 11)
			} else {
				assert.ErrorIs(t, err, ratelimit.ErrExceeded)
				assert.Len(t, s.requests(), 10, "the server never saw the 11th")
			}
			f.assertNoLeak(t)
		})
	}
}

// A Retry-After beyond MaxRetryAfter, or beyond the request's deadline, is not waited
// for: the response is the answer at once.
func TestTransport_LongRetryAfterIsNotWaitedFor(t *testing.T) {
	f := newFixture(t)
	s := newScript(t, status(http.StatusTooManyRequests, "come back in an hour", "Retry-After", "3600"),
		status(http.StatusTooManyRequests, "come back in 5s", "Retry-After", "5"), status(http.StatusOK, "ok"))
	c := f.client(t, resiliencehttp.TransportConfig{}, resilience.Retry(retry.MaxAttempts(3)))

	resp, err := c.Get(s.srv.URL)
	require.NoError(t, err)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "come back in an hour", readAll(t, resp))

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.srv.URL, nil)
	resp, err = c.Do(req)
	require.NoError(t, err)
	assert.Equal(t, "come back in 5s", readAll(t, resp), "5s is past the request's deadline")
	assert.Zero(t, f.clk.Now(), "nothing waited")
	assert.Len(t, s.requests(), 2)
	f.assertNoLeak(t)
}

// A retry delay that would end after the request's deadline is not waited either (SPEC
// CO-10): the last response is the answer at once, as for a Retry-After past the deadline.
func TestTransport_CO10_DelayPastTheDeadlineIsNotWaitedFor(t *testing.T) {
	f := newFixture(t)
	s := newScript(t, status(http.StatusServiceUnavailable, "busy"), status(http.StatusOK, "ok"))
	c := f.client(t, resiliencehttp.TransportConfig{}, resilience.Retry(retry.MaxAttempts(3), retry.Delay(time.Hour)))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.srv.URL, nil)
	resp, err := c.Do(req)
	require.NoError(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "busy", readAll(t, resp))
	assert.Zero(t, f.clk.Now(), "nothing waited")
	assert.Len(t, s.requests(), 1)
	f.assertNoLeak(t)
}

// The caller's context ending during a wait stops the retries; the response waiting to be
// retried is closed.
func TestTransport_ContextEndingDuringTheWaitStops(t *testing.T) {
	f := newFixture(t)
	s := newScript(t, status(http.StatusServiceUnavailable, "busy", "Retry-After", "10"), status(http.StatusOK, "ok"))
	c := f.client(t, resiliencehttp.TransportConfig{}, resilience.Retry(retry.MaxAttempts(2)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.clk.AfterFunc(time.Second, cancel) // the manual clock's Sleep runs it during the wait
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.srv.URL, nil)
	resp, err := c.Do(req)
	if resp != nil {
		_ = resp.Body.Close()
	}
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Len(t, s.requests(), 1)
	f.assertNoLeak(t)
}

// An attempt's timeout bounds the round trip, not the reading of the body, which the
// caller does after RoundTrip has returned.
func TestTransport_TimeoutBoundsTheRoundTripNotTheBody(t *testing.T) {
	f := newFixture(t)
	s := newScript(t, status(http.StatusOK, strings.Repeat("x", 1<<20)))
	c := f.client(t, resiliencehttp.TransportConfig{}, resilience.Timeout(time.Second))
	resp, err := c.Get(s.srv.URL)
	require.NoError(t, err)
	assert.Len(t, readAll(t, resp), 1<<20, "the body is readable once the attempt is over")
	f.assertNoLeak(t)
}

// A real timeout ends a round trip that hangs (system clock; generous bounds).
func TestTransport_TimeoutEndsAHangingRoundTrip(t *testing.T) {
	reg, err := resilience.NewRegistry()
	require.NoError(t, err)
	release := make(chan struct{})
	s := newScript(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	tr, err := resiliencehttp.NewTransport(reg, "api", base, resiliencehttp.TransportConfig{}, resilience.Timeout(50*time.Millisecond))
	require.NoError(t, err)
	start := time.Now()
	_, err = (&http.Client{Transport: tr}).Get(s.srv.URL)
	assert.ErrorIs(t, err, timeout.ErrTimeout)
	assert.Less(t, time.Since(start), 10*time.Second)
}

// A fallback's response replaces the failed one, which is closed.
func TestTransport_FallbackResponseReplacesTheFailedOne(t *testing.T) {
	f := newFixture(t)
	s := newScript(t, status(http.StatusInternalServerError, "oops"))
	c := f.client(t, resiliencehttp.TransportConfig{},
		resilience.Fallback(func(ctx context.Context, err error) (*http.Response, error) {
			var se *resiliencehttp.StatusError
			if !errors.As(err, &se) {
				return nil, err
			}
			return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("cached")),
				Header: http.Header{}, Request: se.Response().Request}, nil
		}))
	resp, err := c.Get(s.srv.URL)
	require.NoError(t, err)
	assert.Equal(t, "cached", readAll(t, resp))
	f.assertNoLeak(t)
}

// Many goroutines through one transport: -race and the leak checks hold.
func TestTransport_ConcurrentRequests(t *testing.T) {
	f := newFixture(t)
	var n atomic.Int32
	s := newScript(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%3 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	c := f.client(t, resiliencehttp.TransportConfig{}, resilience.Retry(retry.MaxAttempts(5), retry.Delay(time.Millisecond)),
		resilience.CircuitBreaker(circuitbreaker.IgnoreOn(resiliencehttp.ErrNotFailure, ratelimit.ErrExceeded)), resilience.Bulkhead())
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 10 {
				resp, err := c.Post(s.srv.URL, "text/plain", strings.NewReader("x"))
				if assert.NoError(t, err) {
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
				}
			}
		})
	}
	wg.Wait()
	f.assertNoLeak(t)
}

func TestTransportConfig_Validation(t *testing.T) {
	f := newFixture(t)
	_, err := resiliencehttp.NewTransport(f.reg, "a", nil, resiliencehttp.TransportConfig{RetryStatuses: []int{429, 42}})
	assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(err))
	_, err = resiliencehttp.NewTransport(f.reg, "b", nil, resiliencehttp.TransportConfig{MaxRetryAfter: -time.Second})
	assert.Equal(t, r4c.NegativeDuration, r4c.CodeOf(err))
	_, err = resiliencehttp.NewTransport(f.reg, "c", nil, resiliencehttp.TransportConfig{}, resilience.Retry(retry.MaxAttempts(0)))
	assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(err))
	tr, err := resiliencehttp.NewTransport(f.reg, "d", nil, resiliencehttp.TransportConfig{})
	require.NoError(t, err)
	(&http.Client{Transport: tr}).CloseIdleConnections() // http.DefaultTransport's, through the transport's
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		value, date string
		want        time.Duration
		ok          bool
	}{
		{"", "", 0, false},
		{"2", "", 2 * time.Second, true},
		{" 120 ", "", 2 * time.Minute, true},
		{"0", "", 0, true},
		{"-1", "", 0, false},
		{"1.5", "", 0, false},
		{"99999999999999999999", "", 1<<63 - 1, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), "", 90 * time.Second, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), now.Add(80 * time.Second).Format(http.TimeFormat), 10 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), "", 0, true},
		{"soon", "", 0, false},
	} {
		h := http.Header{}
		if tc.value != "" {
			h.Set("Retry-After", tc.value)
		}
		if tc.date != "" {
			h.Set("Date", tc.date)
		}
		d, ok := resiliencehttp.RetryAfterOf(h, now)
		assert.Equal(t, tc.ok, ok, "%q", tc.value)
		assert.Equal(t, tc.want, d, "%q", tc.value)
	}
}

// A server that stalls in the middle of a 429 body does not hold the call: reading a
// failed attempt's body is bounded by the attempt's timeout, and by 1s without one.
func TestTransport_StalledFailedBodyDoesNotHang(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte("partial"))
		w.(http.Flusher).Flush()
		select {
		case <-release: // the rest of the body never comes
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	reg, err := resilience.NewRegistry()
	require.NoError(t, err)
	inner := &http.Transport{}
	defer inner.CloseIdleConnections()
	tr, err := resiliencehttp.NewTransport(reg, "stalled", inner, resiliencehttp.TransportConfig{}, resilience.Timeout(100*time.Millisecond))
	require.NoError(t, err)
	start := time.Now()
	_, err = (&http.Client{Transport: tr}).Get(srv.URL)
	assert.ErrorIs(t, err, timeout.ErrTimeout, "the attempt, body included, is bounded by its timeout")
	assert.Less(t, time.Since(start), 900*time.Millisecond, "well before the drain limit")

	plain, err := resiliencehttp.NewTransport(reg, "stalled-plain", inner, resiliencehttp.TransportConfig{})
	require.NoError(t, err)
	start = time.Now()
	resp, err := (&http.Client{Transport: plain}).Get(srv.URL)
	elapsed := time.Since(start)
	require.NoError(t, err)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "the last response is the answer")
	_, readErr := io.ReadAll(resp.Body)
	assert.Error(t, readErr, "the body was cut off")
	require.NoError(t, resp.Body.Close())
	assert.Less(t, elapsed, 10*time.Second, "bounded by the drain limit (1s), not by the server")
}

// An inner RoundTripper that breaks its contract gets an error, not a panic.
func TestTransport_InnerRoundTripperWithoutResponse(t *testing.T) {
	reg, err := resilience.NewRegistry()
	require.NoError(t, err)
	nothing := roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, nil })
	tr, err := resiliencehttp.NewTransport(reg, "broken", nothing, resiliencehttp.TransportConfig{})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodGet, "http://example.invalid/", nil)
	require.NoError(t, err)
	_, err = tr.RoundTrip(req)
	assert.Error(t, err)

	noBody := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Request: r}, nil
	})
	tr, err = resiliencehttp.NewTransport(reg, "nobody", noBody, resiliencehttp.TransportConfig{})
	require.NoError(t, err)
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Empty(t, b)
	require.NoError(t, resp.Body.Close())
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A request whose context is already done is not sent, takes no permit and publishes no
// event: RoundTrip returns the context's error (fault: the transport went through its
// policies and the wrapped RoundTripper with a done context).
func TestTransport_DoneContextIsNotSentAndTakesNoPermit(t *testing.T) {
	var events []policy.Event
	f := newFixture(t, resilience.WithEventListener(func(e policy.Event) { events = append(events, e) }))
	s := newScript(t, status(http.StatusOK, "ok"))
	var sent atomic.Int32
	inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent.Add(1)
		return f.rt.RoundTrip(r)
	})
	tr, err := resiliencehttp.NewTransport(f.reg, "api", inner, resiliencehttp.TransportConfig{},
		resilience.Retry(retry.MaxAttempts(3)), resilience.CircuitBreaker(circuitbreaker.IgnoreOn(resiliencehttp.ErrNotFailure, ratelimit.ErrExceeded)),
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)), resilience.Bulkhead())
	require.NoError(t, err)
	// Not ctxtest.Nil: an http.Request cannot carry a nil context.
	for _, tc := range []ctxtest.Over{ctxtest.Canceled(), ctxtest.Expired()} {
		body := &closeCounter{Reader: strings.NewReader("payload")}
		req, err := http.NewRequestWithContext(tc.Ctx, http.MethodPost, s.srv.URL, body)
		require.NoError(t, err)
		resp, err := tr.RoundTrip(req)
		assert.Nil(t, resp)
		assert.ErrorIs(t, err, tc.Want)
		assert.Equal(t, 1, body.closed, "the request body is closed, as the RoundTripper contract asks")
	}
	assert.Zero(t, sent.Load(), "nothing was sent")
	assert.Empty(t, s.requests())
	assert.Empty(t, events, "no policy saw the requests")
	rl, err := f.reg.RateLimiter("api")
	require.NoError(t, err)
	assert.Equal(t, 1, rl.Snapshot().AvailablePermits, "no permit was taken")

	resp, err := (&http.Client{Transport: tr}).Get(s.srv.URL)
	require.NoError(t, err, "a live request still passes")
	assert.Equal(t, "ok", readAll(t, resp))
	f.assertNoLeak(t)
}

type closeCounter struct {
	io.Reader
	closed int
}

func (c *closeCounter) Close() error { c.closed++; return nil }

// An attempt whose context ended while a policy held it (here a user's layer that lets a
// done context through) is not sent either.
func TestTransport_AttemptWithADoneContextIsNotSent(t *testing.T) {
	f := newFixture(t)
	s := newScript(t, status(http.StatusOK, "ok"))
	ctx, cancel := context.WithCancel(context.Background())
	tr, err := resiliencehttp.NewTransport(f.reg, "api", f.rt, resiliencehttp.TransportConfig{}, resilience.Use[*http.Response](cancelling[*http.Response]{cancel}))
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.srv.URL, nil)
	require.NoError(t, err)
	_, err = tr.RoundTrip(req)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, s.requests())
	assert.Zero(t, f.rt.sent.Load())
}

// cancelling is a user's policy that cancels the call's context before calling on.
type cancelling[T any] struct{ cancel context.CancelFunc }

func (c cancelling[T]) Layer() policy.Layer { return "cancelling" }
func (c cancelling[T]) Decorate(next policy.Call[T]) policy.Call[T] {
	return func(ctx context.Context) (T, error) {
		c.cancel()
		return next(ctx)
	}
}
func (c cancelling[T]) DecorateAsync(next policy.AsyncCall[T]) policy.AsyncCall[T] { return next }

// Nil and zero values given to the transport's API are errors, never panics (fault: a nil
// request, a zero StatusError and a fallback that returned neither a response nor an
// error panicked or broke the RoundTripper contract).
func TestTransport_NilAndZeroValuesDoNotPanic(t *testing.T) {
	f := newFixture(t)
	tr, err := resiliencehttp.NewTransport(f.reg, "api", nil, resiliencehttp.TransportConfig{})
	require.NoError(t, err)
	require.NotPanics(t, func() {
		_, err = tr.RoundTrip(nil)
	})
	assert.Error(t, err)

	_, err = resiliencehttp.NewTransport(nil, "api", nil, resiliencehttp.TransportConfig{})
	assert.Equal(t, r4c.BadSpec, r4c.CodeOf(err), "a nil registry")

	for _, e := range []*resiliencehttp.StatusError{nil, {}} {
		require.NotPanics(t, func() {
			assert.Equal(t, "resiliencehttp: unsuccessful response status", e.Error())
			assert.Nil(t, e.Response())
			d, ok := e.RetryAfter()
			assert.Zero(t, d)
			assert.False(t, ok)
			assert.True(t, e.NeverRetried())
			assert.ErrorIs(t, e, resiliencehttp.ErrNotFailure)
		})
	}

	s := newScript(t, status(http.StatusInternalServerError, "oops"))
	tr, err = resiliencehttp.NewTransport(f.reg, "fallback", f.rt, resiliencehttp.TransportConfig{},
		resilience.Fallback(func(context.Context, error) (*http.Response, error) { return nil, nil }))
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodGet, s.srv.URL, nil)
	require.NoError(t, err)
	resp, err := tr.RoundTrip(req)
	assert.Nil(t, resp)
	assert.ErrorContains(t, err, "neither a response nor an error")
	f.assertNoLeak(t)
}

// A wrapped RoundTripper that panics leaves nothing behind: the request's context, which
// the transport derived for the attempt, is canceled (fault: it stayed, with its hook on
// the attempt's context, until the caller's context ended).
func TestTransport_PanickingRoundTripperLeavesNoContextBehind(t *testing.T) {
	f := newFixture(t)
	var seen context.Context
	inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen = r.Context()
		panic("boom")
	})
	for name, spec := range map[string]resilience.Spec{"bulkhead": resilience.Bulkhead(), "timeout": resilience.Timeout(time.Hour)} {
		tr, err := resiliencehttp.NewTransport(f.reg, "api."+name, inner, resiliencehttp.TransportConfig{}, spec)
		require.NoError(t, err)
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://example.invalid/", nil)
		require.NoError(t, err)
		seen = nil
		assert.PanicsWithValue(t, "boom", func() { _, _ = tr.RoundTrip(req) }, name)
		require.NotNil(t, seen, name)
		assert.ErrorIs(t, seen.Err(), context.Canceled, name)
	}
	require.NoError(t, t.Context().Err(), "the caller's context is still live")
}
