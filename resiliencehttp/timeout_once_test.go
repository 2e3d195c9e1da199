package resiliencehttp_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencehttp"
)

// A request that must not be sent twice (a POST) and that its per-attempt timeout ends
// while the server holds it is not retried: the retry neither waits its backoff nor sends
// it again, and RoundTrip fails with the timeout's error. A GET ended the same way is
// retried, after the backoff. No network: the inner RoundTripper moves the manual clock
// past the timeout and waits for the attempt's context.
func TestTransport_TimedOutNonIdempotentRequestIsSentOnce(t *testing.T) {
	for _, tc := range []struct {
		method string
		sends  int64
		clock  time.Duration // how far the clock moved: the timeouts, and the backoffs waited
	}{
		{http.MethodPost, 1, time.Second},
		{http.MethodGet, 3, 3*time.Second + 2*time.Hour},
	} {
		t.Run(tc.method, func(t *testing.T) {
			clk := clock.NewManual()
			reg, err := resilience.NewRegistry(resilience.WithClock(clk))
			require.NoError(t, err)
			var sends atomic.Int64
			inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				sends.Add(1)
				clk.Advance(time.Second) // the attempt's timeout passes while the server holds it
				<-r.Context().Done()
				return nil, r.Context().Err()
			})
			tr, err := resiliencehttp.NewTransport(reg, "once-"+tc.method, inner, resiliencehttp.TransportConfig{},
				resilience.Retry(retry.MaxAttempts(3), retry.Delay(time.Hour)), resilience.Timeout(time.Second))
			require.NoError(t, err)
			req, err := http.NewRequest(tc.method, "http://api.example/items", nil)
			require.NoError(t, err)
			start := clk.Now()
			resp, err := tr.RoundTrip(req)
			if resp != nil {
				_ = resp.Body.Close()
			}
			assert.ErrorIs(t, err, timeout.ErrTimeout)
			assert.Equal(t, tc.sends, sends.Load())
			assert.Equal(t, tc.clock, clk.Now()-start)
		})
	}
}
