package resiliencehttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/policy/observe"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	"github.com/resilience4go/resilience4go/resiliencehttp"
)

type reqKey struct{}

// OB-1: the middleware decides with the request's context, so a keyed limiter's recorder
// sees each request once, with its context: one admitted, one rejected.
func TestOB1_MiddlewareRecordsWithTheRequestsContext(t *testing.T) {
	obs := &contracttest.Observer{}
	k, err := keyed.New[string](ratelimit.Permits(1), ratelimit.Period(time.Hour),
		ratelimit.WithClock(clock.NewManual()), ratelimit.Name("perClient"), keyed.Observe(obs))
	require.NoError(t, err)
	h := middleware(t, k, resiliencehttp.KeyFunc(func(*http.Request) string { return "alice" }))(
		http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for range 2 {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req = req.WithContext(context.WithValue(req.Context(), reqKey{}, "req"))
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	rec := obs.Of(ratelimit.Layer, "perClient")
	require.Equal(t, []observe.Result{observe.ResultAdmitted, observe.ResultRejected}, rec.Results())
	for _, o := range rec.Outcomes() {
		assert.Equal(t, "alice", o.Key)
	}
	for _, c := range rec.Contexts() {
		assert.Equal(t, "req", c.Value(reqKey{}))
	}
}
