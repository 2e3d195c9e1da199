package resiliencehttp_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencehttp"
)

// arrivals records, on the manual clock, when each request reached the server.
type arrivals struct {
	mu    sync.Mutex
	times []time.Duration
}

func (a *arrivals) get() []time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]time.Duration(nil), a.times...)
}

// The transport never sends a request before its client limiter's permit is due, and
// does not waste its retries on its own limiter's refusals: with a limiter of 1 request
// per second and a retry of 3 attempts 100ms apart (waitForPermit left off, even set off),
// two requests in a row reach the server at 0 and at exactly 1s; the second is refused
// once, at 0, and waits the 1s until the permit.
func TestTransport_NeverSendsBeforeTheClientPermit(t *testing.T) {
	for _, name := range []string{"retry's default", "waitForPermit set off"} {
		t.Run(name, func(t *testing.T) {
			rec := &contracttest.Recorder{}
			f := newFixture(t, resilience.WithEventListener(rec.Listen))
			arr := &arrivals{}
			s := newScript(t, func(w http.ResponseWriter, r *http.Request) {
				arr.mu.Lock()
				arr.times = append(arr.times, f.clk.Now())
				arr.mu.Unlock()
				status(http.StatusOK, "ok")(w, r)
			})
			opts := []retry.Option{retry.MaxAttempts(3), retry.Delay(100 * time.Millisecond)}
			if name == "waitForPermit set off" {
				opts = append(opts, retry.WaitForPermit(false))
			}
			c := f.client(t, resiliencehttp.TransportConfig{}, resilience.Retry(opts...),
				resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)))

			for range 2 {
				resp, err := c.Get(s.srv.URL)
				require.NoError(t, err)
				assert.Equal(t, "ok", readAll(t, resp))
			}
			assert.Equal(t, []time.Duration{0, time.Second}, arr.get(), "the second request reaches the server at 1s")
			assert.EqualValues(t, 2, f.rt.sent.Load(), "two requests sent, none early")
			assert.Equal(t, 1, rec.Count(ratelimit.EventRejected), "one refusal: no attempt wasted")
			attempts := rec.Of(retry.EventAttempt)
			require.Len(t, attempts, 1)
			assert.Equal(t, time.Second, attempts[0].Wait, "the retry waited for the permit")
			assert.ErrorIs(t, attempts[0].Err, ratelimit.ErrExceeded)
			assert.Zero(t, rec.Count(retry.EventExhausted))
			f.assertNoLeak(t)
		})
	}
}

// A 503 without Retry-After is retried after the retry's delay; the limiter refuses that
// attempt, as its permit is not due, and the retry then waits for the permit: the server
// sees the request again at exactly 1s, never before.
func TestTransport_RetryAfterAFailureWaitsForTheClientPermit(t *testing.T) {
	rec := &contracttest.Recorder{}
	f := newFixture(t, resilience.WithEventListener(rec.Listen))
	arr := &arrivals{}
	first := true
	s := newScript(t, func(w http.ResponseWriter, r *http.Request) {
		arr.mu.Lock()
		arr.times = append(arr.times, f.clk.Now())
		busy := first
		first = false
		arr.mu.Unlock()
		if busy {
			status(http.StatusServiceUnavailable, "busy")(w, r)
			return
		}
		status(http.StatusOK, "ok")(w, r)
	})
	c := f.client(t, resiliencehttp.TransportConfig{},
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(100*time.Millisecond)),
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)))

	resp, err := c.Get(s.srv.URL)
	require.NoError(t, err)
	assert.Equal(t, "ok", readAll(t, resp))
	assert.Equal(t, []time.Duration{0, time.Second}, arr.get())
	var waits []time.Duration
	for _, e := range rec.Of(retry.EventAttempt) {
		waits = append(waits, e.Wait)
	}
	assert.Equal(t, []time.Duration{100 * time.Millisecond, 900 * time.Millisecond}, waits,
		"the delay after the 503, then the rest of the wait for the permit")
	f.assertNoLeak(t)
}
