package resilienceotel_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/fallback"
	"github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/policy/observe"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilienceotel"
)

// These tests drive the recorders directly, with the outcomes and events that
// observe.Outcome's documentation says each layer records, so that each counter's rule is
// checked apart from the policies. registry_test.go checks the same instruments through
// a registry's policies.

var errBoom = errors.New("boom")

// OB-2: a rate limiter's recorder counts admissions and rejections and records waits.
func TestOB2_RecorderRateLimiter(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	r := h.m.Instrument(ratelimit.Layer, "rl")
	require.NotNil(t, r)
	assert.Same(t, r, h.m.Instrument(ratelimit.Layer, "rl"), "one recorder per instance")
	for range 3 {
		r.Record(ctx, observe.Outcome{Result: observe.ResultAdmitted})
	}
	r.Record(ctx, observe.Outcome{Result: observe.ResultAdmitted, Wait: 250 * time.Millisecond})
	r.Record(ctx, observe.Outcome{Result: observe.ResultAdmitted, Wait: 500 * time.Millisecond})
	r.Record(ctx, observe.Outcome{Result: observe.ResultRejected, Err: errBoom})
	r.Record(ctx, observe.Outcome{Result: observe.ResultAdmitted, Key: "tenant-a"}) // no key attribute: the instance's

	c := h.collect()
	assert.Equal(t, int64(6), c.int(RateLimiterCalls, "name=rl", "outcome=admitted"))
	assert.Equal(t, int64(1), c.int(RateLimiterCalls, "name=rl", "outcome=rejected"))
	assert.Equal(t, int64(2), c.int(RateLimiterWaitedCalls, "name=rl"))
	n, sum := c.hist(RateLimiterWaitDuration, "name=rl")
	assert.Equal(t, uint64(2), n)
	assert.InDelta(t, 0.75, sum, 1e-12)
	assert.Len(t, c.intPoints(RateLimiterCalls), 2, "no series per key")
}

// OB-2: with WithKeyAttribute(true), a keyed limiter's outcomes are counted per key; an
// outcome without a key stays the instance's.
func TestOB2_RecorderKeyAttribute(t *testing.T) {
	h := newHarness(t, resilienceotel.WithKeyAttribute(true))
	ctx := context.Background()
	r := h.m.Instrument(ratelimit.Layer, "rl")
	r.Record(ctx, observe.Outcome{Result: observe.ResultAdmitted, Key: "a"})
	r.Record(ctx, observe.Outcome{Result: observe.ResultAdmitted, Key: "a", Wait: time.Second})
	r.Record(ctx, observe.Outcome{Result: observe.ResultRejected, Key: "b"})
	r.Record(ctx, observe.Outcome{Result: observe.ResultAdmitted})

	c := h.collect()
	assert.Equal(t, map[string]int64{
		"{name=rl,outcome=admitted}":       1,
		"{name=rl,outcome=rejected}":       0,
		"{key=a,name=rl,outcome=admitted}": 2,
		"{key=a,name=rl,outcome=rejected}": 0,
		"{key=b,name=rl,outcome=admitted}": 0,
		"{key=b,name=rl,outcome=rejected}": 1,
	}, c.intPoints(RateLimiterCalls))
	assert.Equal(t, int64(1), c.int(RateLimiterWaitedCalls, "name=rl", "key=a"))
	n, sum := c.hist(RateLimiterWaitDuration, "name=rl", "key=a")
	assert.Equal(t, uint64(1), n)
	assert.Equal(t, 1.0, sum)
}

// OB-2: a breaker's recorder counts calls by outcome, not_permitted included, and slow
// calls, records the durations of the calls it let through, and counts transitions.
func TestOB2_RecorderCircuitBreaker(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	r := h.m.Instrument(circuitbreaker.Layer, "cb")
	r.Record(ctx, observe.Outcome{Result: observe.ResultSucceeded, Latency: 100 * time.Millisecond})
	r.Record(ctx, observe.Outcome{Result: observe.ResultSucceeded, Latency: 3 * time.Second, Slow: true})
	r.Record(ctx, observe.Outcome{Result: observe.ResultFailed, Latency: 2 * time.Second, Slow: true, Err: errBoom})
	r.Record(ctx, observe.Outcome{Result: observe.ResultIgnored, Latency: 50 * time.Millisecond, Err: errBoom})
	r.Record(ctx, observe.Outcome{Result: observe.ResultRejected, Err: errBoom})
	r.Record(ctx, observe.Outcome{Result: observe.ResultRejected, Err: errBoom})
	r.Event(ctx, policy.Event{Kind: circuitbreaker.EventTransition, Attrs: policy.EventAttrs{slog.String("from", "closed"), slog.String("to", "open")}})
	r.Event(ctx, policy.Event{Kind: circuitbreaker.EventTransition, Attrs: policy.EventAttrs{slog.String("from", "open"), slog.String("to", "half-open")}})
	r.Event(ctx, policy.Event{Kind: circuitbreaker.EventTransition, Attrs: policy.EventAttrs{slog.String("from", "half-open"), slog.String("to", "open")}})
	r.Event(ctx, policy.Event{Kind: circuitbreaker.EventTransition, Attrs: policy.EventAttrs{slog.String("from", "open"), slog.String("to", "half-open")}})

	c := h.collect()
	assert.Equal(t, map[string]int64{
		"{name=cb,outcome=succeeded}":     2,
		"{name=cb,outcome=failed}":        1,
		"{name=cb,outcome=ignored}":       1,
		"{name=cb,outcome=not_permitted}": 2,
	}, c.intPoints(CircuitBreakerCalls))
	assert.Equal(t, map[string]int64{
		"{name=cb,outcome=succeeded}": 1,
		"{name=cb,outcome=failed}":    1,
	}, c.intPoints(CircuitBreakerSlowCalls))
	n, sum := c.hist(CircuitBreakerCallDuration, "name=cb", "outcome=succeeded")
	assert.Equal(t, uint64(2), n)
	assert.InDelta(t, 3.1, sum, 1e-12)
	n, sum = c.hist(CircuitBreakerCallDuration, "name=cb", "outcome=failed")
	assert.Equal(t, uint64(1), n)
	assert.Equal(t, 2.0, sum)
	n, sum = c.hist(CircuitBreakerCallDuration, "name=cb", "outcome=ignored")
	assert.Equal(t, uint64(1), n)
	assert.Equal(t, 0.05, sum)
	assert.False(t, c.has(CircuitBreakerCallDuration, "name=cb", "outcome=not_permitted"),
		"a call not permitted has no duration")
	assert.Equal(t, map[string]int64{
		"{from=closed,name=cb,to=open}":    1,
		"{from=open,name=cb,to=half_open}": 2,
		"{from=half_open,name=cb,to=open}": 1,
	}, c.intPoints(CircuitBreakerTransitions))
}

// OB-2: a retry's recorder counts calls by kind, and every attempt made.
func TestOB2_RecorderRetry(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	r := h.m.Instrument(retry.Layer, "rt")
	r.Record(ctx, observe.Outcome{Result: observe.ResultSucceeded, Attempts: 1})
	r.Record(ctx, observe.Outcome{Result: observe.ResultSucceeded, Attempts: 1})
	r.Record(ctx, observe.Outcome{Result: observe.ResultSucceeded, Attempts: 3})
	r.Record(ctx, observe.Outcome{Result: observe.ResultFailed, Attempts: 4, Err: errBoom})
	r.Record(ctx, observe.Outcome{Result: observe.ResultFailed, Attempts: 1, Err: errBoom})
	r.Record(ctx, observe.Outcome{Result: observe.ResultAborted, Attempts: 2, Err: errBoom})

	c := h.collect()
	assert.Equal(t, map[string]int64{
		"{kind=succeeded_without_retry,name=rt}": 2,
		"{kind=succeeded_with_retry,name=rt}":    1,
		"{kind=failed_with_retry,name=rt}":       1,
		"{kind=failed_without_retry,name=rt}":    1,
		"{kind=aborted,name=rt}":                 1,
	}, c.intPoints(RetryCalls))
	assert.Equal(t, int64(12), c.int(RetryAttempts, "name=rt"))
}

// OB-2: timeout, hedge, bulkhead and adaptive limit recorders count by outcome.
func TestOB2_RecorderTimeoutHedgeBulkheadAdaptive(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	to := h.m.Instrument(timeout.Layer, "to")
	to.Record(ctx, observe.Outcome{Result: observe.ResultSucceeded, Latency: time.Second})
	to.Record(ctx, observe.Outcome{Result: observe.ResultTimedOut, Latency: 2 * time.Second})
	to.Record(ctx, observe.Outcome{Result: observe.ResultTimedOut, Latency: 2 * time.Second})
	hg := h.m.Instrument(hedge.Layer, "hg")
	hg.Record(ctx, observe.Outcome{Result: observe.ResultSucceeded, Attempts: 2})
	hg.Record(ctx, observe.Outcome{Result: observe.ResultFailed, Attempts: 3, Err: errBoom})
	bh := h.m.Instrument(bulkhead.Layer, "bh")
	bh.Record(ctx, observe.Outcome{Result: observe.ResultAdmitted})
	bh.Record(ctx, observe.Outcome{Result: observe.ResultAdmitted, Wait: 20 * time.Millisecond})
	bh.Record(ctx, observe.Outcome{Result: observe.ResultRejected, Wait: 30 * time.Millisecond})
	al := h.m.Instrument(adaptivelimit.Layer, "al")
	al.Record(ctx, observe.Outcome{Result: observe.ResultAdmitted, Wait: time.Millisecond})
	al.Record(ctx, observe.Outcome{Result: observe.ResultRejected})

	c := h.collect()
	assert.Equal(t, map[string]int64{
		"{name=to,outcome=succeeded}": 1,
		"{name=to,outcome=failed}":    0,
		"{name=to,outcome=timed_out}": 2,
	}, c.intPoints(TimeoutCalls))
	assert.Equal(t, map[string]int64{
		"{name=hg,outcome=succeeded}": 1,
		"{name=hg,outcome=failed}":    1,
	}, c.intPoints(HedgeCalls))
	assert.Equal(t, int64(5), c.int(HedgeAttempts, "name=hg"))
	assert.Equal(t, map[string]int64{
		"{name=bh,outcome=admitted}": 2,
		"{name=bh,outcome=rejected}": 1,
	}, c.intPoints(BulkheadCalls))
	n, sum := c.hist(BulkheadWaitDuration, "name=bh")
	assert.Equal(t, uint64(1), n, "the wait of a rejected call is not a wait for a slot it got")
	assert.Equal(t, 0.02, sum)
	assert.Equal(t, map[string]int64{
		"{name=al,outcome=admitted}": 1,
		"{name=al,outcome=rejected}": 1,
	}, c.intPoints(AdaptiveLimitCalls))
}

// OB-2: a whole call's recorder counts successes and failures always, and rejections by
// each layer that refused one, with that layer; its duration only with WithCallDuration.
func TestOB2_RecorderCall(t *testing.T) {
	for _, withDuration := range []bool{false, true} {
		h := newHarness(t, resilienceotel.WithCallDuration(withDuration))
		ctx := context.Background()
		r := h.m.Instrument(observe.LayerCall, "API.Get")
		r.Record(ctx, observe.Outcome{Result: observe.ResultSucceeded, Latency: time.Second})
		r.Record(ctx, observe.Outcome{Result: observe.ResultFailed, Latency: 2 * time.Second, Err: errBoom})
		r.Record(ctx, observe.Outcome{Result: observe.ResultRejected, RejectedBy: ratelimit.Layer, Err: errBoom})
		r.Record(ctx, observe.Outcome{Result: observe.ResultRejected, RejectedBy: ratelimit.Layer, Err: errBoom})
		r.Record(ctx, observe.Outcome{Result: observe.ResultRejected, RejectedBy: "quota", Err: errBoom})

		c := h.collect()
		assert.Equal(t, map[string]int64{
			"{name=API.Get,outcome=succeeded}":                  1,
			"{name=API.Get,outcome=failed}":                     1,
			"{layer=rateLimiter,name=API.Get,outcome=rejected}": 2,
			"{layer=quota,name=API.Get,outcome=rejected}":       1,
		}, c.intPoints(resilienceotel.Calls))
		if !withDuration {
			assert.NotContains(t, c.metrics, resilienceotel.CallDuration)
			continue
		}
		n, sum := c.hist(resilienceotel.CallDuration, "name=API.Get", "outcome=succeeded")
		assert.Equal(t, uint64(1), n)
		assert.Equal(t, 1.0, sum)
		n, _ = c.hist(resilienceotel.CallDuration, "name=API.Get", "outcome=rejected")
		assert.Equal(t, uint64(3), n)
	}
}

// OB-2: layers that record nothing, or that the package does not know, get no recorder
// worth the cost (a fallback's records only its events); after Close none at all.
func TestOB2_InstrumentUnknownLayerAndClose(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { require.NoError(t, mp.Shutdown(context.Background())) }()
	m, err := resilienceotel.New(mp)
	require.NoError(t, err)
	assert.Nil(t, m.Instrument("quota", "q"))
	fb := m.Instrument(fallback.Layer, "fb")
	require.NotNil(t, fb)
	fb.Record(context.Background(), observe.Outcome{Result: observe.ResultFailed}) // nothing to count
	r := m.Instrument(ratelimit.Layer, "rl")
	r.Record(context.Background(), observe.Outcome{Result: observe.ResultAdmitted})

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	require.NotEmpty(t, rm.ScopeMetrics)

	require.NoError(t, m.Close())
	require.NoError(t, m.Close(), "Close twice")
	assert.Nil(t, m.Instrument(ratelimit.Layer, "later"))
	rm = metricdata.ResourceMetrics{}
	require.NoError(t, reader.Collect(context.Background(), &rm))
	for _, sm := range rm.ScopeMetrics {
		for _, mm := range sm.Metrics {
			assert.Failf(t, "reported after Close", "%s", mm.Name)
		}
	}
	assert.Error(t, m.Observe(nil))
}
