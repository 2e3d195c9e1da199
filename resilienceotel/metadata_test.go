package resilienceotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/observe"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resilienceotel"
)

// instrumentKind is how an instrument is exported.
type instrumentKind string

const (
	counterKind   instrumentKind = "monotonic sum"     // an observable counter
	upDownKind    instrumentKind = "non-monotonic sum" // an observable up-down counter
	gaugeKind     instrumentKind = "gauge"
	histogramKind instrumentKind = "histogram"
)

func kindOf(t *testing.T, d metricdata.Aggregation) instrumentKind {
	switch d := d.(type) {
	case metricdata.Sum[int64]:
		require.Equal(t, metricdata.CumulativeTemporality, d.Temporality)
		if d.IsMonotonic {
			return counterKind
		}
		return upDownKind
	case metricdata.Gauge[float64]:
		return gaugeKind
	case metricdata.Histogram[float64]:
		require.Equal(t, []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10},
			d.DataPoints[0].Bounds, "the advised buckets")
		return histogramKind
	}
	t.Fatalf("unexpected aggregation %T", d)
	return ""
}

// OB-2: every instrument, with its kind and unit and a description, once every policy
// has run a call and recorded a wait and a duration.
func TestOB2_InstrumentsKindsAndUnits(t *testing.T) {
	h := newHarness(t, resilienceotel.WithCallDuration(true))
	runEveryPolicy(t, h)

	want := map[string]struct {
		kind instrumentKind
		unit string
	}{
		RateLimiterAvailablePermits:    {upDownKind, "{permit}"},
		RateLimiterWaitingCalls:        {upDownKind, "{call}"},
		RateLimiterCalls:               {counterKind, "{call}"},
		RateLimiterWaitedCalls:         {counterKind, "{call}"},
		RateLimiterWaitDuration:        {histogramKind, "s"},
		CircuitBreakerState:            {upDownKind, "1"},
		CircuitBreakerFailureRate:      {gaugeKind, "%"},
		CircuitBreakerSlowCallRate:     {gaugeKind, "%"},
		CircuitBreakerCalls:            {counterKind, "{call}"},
		CircuitBreakerSlowCalls:        {counterKind, "{call}"},
		CircuitBreakerCallDuration:     {histogramKind, "s"},
		CircuitBreakerTransitions:      {counterKind, "{transition}"},
		BulkheadAvailableSlots:         {upDownKind, "{slot}"},
		BulkheadMaxSlots:               {upDownKind, "{slot}"},
		BulkheadQueuedCalls:            {upDownKind, "{call}"},
		BulkheadCalls:                  {counterKind, "{call}"},
		BulkheadWaitDuration:           {histogramKind, "s"},
		BulkheadShedCalls:              {counterKind, "{call}"},
		RateLimiterShadowRejections:    {counterKind, "{call}"},
		BulkheadShadowRejections:       {counterKind, "{call}"},
		CircuitBreakerShadowRejections: {counterKind, "{call}"},
		AdaptiveLimitShadowRejections:  {counterKind, "{call}"},
		RetryCalls:                     {counterKind, "{call}"},
		RetryAttempts:                  {counterKind, "{attempt}"},
		TimeoutCalls:                   {counterKind, "{call}"},
		HedgeCalls:                     {counterKind, "{call}"},
		HedgeAttempts:                  {counterKind, "{attempt}"},
		HedgeBudgetAvailable:           {upDownKind, "{attempt}"},
		AdaptiveLimitLimit:             {upDownKind, "{call}"},
		AdaptiveLimitInFlight:          {upDownKind, "{call}"},
		AdaptiveLimitQueuedCalls:       {upDownKind, "{call}"},
		AdaptiveLimitCalls:             {counterKind, "{call}"},
		AdaptiveLimitShedCalls:         {counterKind, "{call}"},
		resilienceotel.Calls:           {counterKind, "{call}"},
		resilienceotel.CallDuration:    {histogramKind, "s"},
	}
	c := h.collect()
	for name, w := range want {
		m, ok := c.metrics[name]
		if !assert.Truef(t, ok, "%s is not reported", name) {
			continue
		}
		assert.Equal(t, w.kind, kindOf(t, m.Data), name)
		assert.Equal(t, w.unit, m.Unit, name)
		assert.NotEmpty(t, m.Description, name)
	}
	for name := range c.metrics {
		_, ok := want[name]
		assert.Truef(t, ok, "%s is not listed", name)
	}
	assert.Equal(t, map[string]int64{
		"{from=closed,name=API.Get,to=forced_open}": 1,
		"{from=forced_open,name=API.Get,to=closed}": 1,
	}, c.intPoints(CircuitBreakerTransitions))
	assert.Equal(t, 0.0, c.float(CircuitBreakerFailureRate, "name=API.Get"))
	assert.Equal(t, 0.0, c.float(CircuitBreakerSlowCallRate, "name=API.Get"))
	assert.Equal(t, int64(3), c.int(RateLimiterAvailablePermits, "name=API.Get"))
	assert.Equal(t, int64(3), c.int(BulkheadAvailableSlots, "name=API.Get"))
	assert.Equal(t, int64(4), c.int(AdaptiveLimitLimit, "name=API.Get"))
	assert.Equal(t, int64(10), c.int(HedgeBudgetAvailable, "name=API.Hedged"))
}

// runEveryPolicy runs calls through every policy, on a registry that h's Metrics observes,
// so that every instrument has a point: a call through a rate limiter, a breaker, a
// bulkhead, an adaptive limit, a timeout and a retry (API.Get) before and after its
// breaker is forced open and reset, a hedged call (API.Hedged), and a wait of the rate
// limiter and of the bulkhead.
func runEveryPolicy(t *testing.T, h *harness) {
	t.Helper()
	reg, _ := newRegistry(t, h)
	call, err := resilience.Wrap(reg, "API.Get", ok,
		resilience.RateLimiter(ratelimit.Permits(5), ratelimit.Period(time.Second)),
		resilience.CircuitBreaker(circuitbreaker.SlidingWindowSize(1), circuitbreaker.MinimumCalls(1)),
		resilience.Bulkhead(bulkhead.MaxConcurrent(3)),
		resilience.AdaptiveLimit(adaptivelimit.InitialLimit(4)),
		resilience.Timeout(time.Second),
		resilience.Retry(retry.MaxAttempts(2)))
	require.NoError(t, err)
	_, err = call(context.Background())
	require.NoError(t, err)
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "API.Get")
	require.NoError(t, err)
	_ = cb.TransitionTo(circuitbreaker.ForcedOpen) // transitions by hand are counted too
	cb.Reset()
	_, err = call(context.Background())
	require.NoError(t, err)
	hedged, err := resilience.WrapAsync(reg, "API.Hedged", func(ctx context.Context) *async.Future[string] {
		return async.Completed("ok")
	}, resilience.Hedge())
	require.NoError(t, err)
	_, err = hedged(context.Background()).Await(context.Background())
	require.NoError(t, err)
	// The waits, which the calls above did not make.
	ctx := context.Background()
	h.m.Instrument(ratelimit.Layer, "API.Get").Record(ctx, observe.Outcome{Result: observe.ResultAdmitted, Wait: time.Millisecond})
	h.m.Instrument(bulkhead.Layer, "API.Get").Record(ctx, observe.Outcome{Result: observe.ResultAdmitted, Wait: time.Millisecond})
}

// OB-2: a nil MeterProvider is the global one; Observe refuses a nil registry with
// R4C-REG-010.
func TestOB2_NewWithGlobalProviderAndObserveNil(t *testing.T) {
	m, err := resilienceotel.New(nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close()) }()
	r := m.Instrument(ratelimit.Layer, "rl")
	require.NotNil(t, r)
	r.Record(context.Background(), observe.Outcome{Result: observe.ResultAdmitted, Wait: time.Second})
	err = m.Observe(nil)
	require.ErrorIs(t, err, &policy.ConfigError{Code: r4c.BadSpec})
}
