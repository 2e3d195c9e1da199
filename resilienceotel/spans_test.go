package resilienceotel_test

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resilienceotel"
)

// tracer is a TracerProvider whose spans a SpanRecorder keeps.
type tracer struct {
	rec *tracetest.SpanRecorder
	tp  *sdktrace.TracerProvider
}

func newTracer(t *testing.T, opts ...sdktrace.TracerProviderOption) *tracer {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(append([]sdktrace.TracerProviderOption{sdktrace.WithSpanProcessor(rec)}, opts...)...)
	t.Cleanup(func() { require.NoError(t, tp.Shutdown(context.Background())) })
	return &tracer{rec: rec, tp: tp}
}

// events runs fn in a new span and returns the span's events, each formatted as
// name{key=value,...} with the attributes sorted by key.
func (tr *tracer) events(t *testing.T, fn func(ctx context.Context)) []string {
	t.Helper()
	tr.rec.Reset()
	ctx, span := tr.tp.Tracer("test").Start(context.Background(), "op")
	fn(ctx)
	span.End()
	ended := tr.rec.Ended()
	if !span.IsRecording() && len(ended) == 0 {
		return nil // a span that was not sampled is not recorded
	}
	require.Len(t, ended, 1)
	var out []string
	for _, e := range ended[0].Events() {
		var kv []string
		for _, a := range e.Attributes {
			kv = append(kv, fmt.Sprintf("%s=%s", a.Key, a.Value.String()))
		}
		sort.Strings(kv)
		out = append(out, e.Name+"{"+strings.Join(kv, ",")+"}")
	}
	return out
}

// OB-3: a rejection and a wait of a rate limiter reach the call's span, with their
// attributes.
func TestOB3_SpanEventsRateLimiter(t *testing.T) {
	h := newHarness(t)
	reg, _ := newRegistry(t, h)
	tr := newTracer(t)
	call, err := resilience.Wrap(reg, "API.Get", ok,
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)))
	require.NoError(t, err)
	waits, err := resilience.Wrap(reg, "API.Wait", ok,
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(2*time.Second), ratelimit.MaxWait(time.Minute)))
	require.NoError(t, err)

	got := tr.events(t, func(ctx context.Context) {
		_, err := call(ctx) // admitted: no event
		require.NoError(t, err)
		_, err = call(ctx)
		require.ErrorIs(t, err, ratelimit.ErrExceeded)
		_, _ = waits(ctx)
		_, _ = waits(ctx) // waits 2s
	})
	assert.Equal(t, []string{
		`resilience.rate_limiter.rejected{error.message=ratelimit: rate limit exceeded for "API.Get",name=API.Get,retry_after=1}`,
		`resilience.rate_limiter.waited{name=API.Wait,wait=2}`,
	}, got)
}

// OB-3: a retry's attempts and its exhaustion, a breaker's transition and rejection,
// and the fallback that replaced the error, all in the call's span.
func TestOB3_SpanEventsRetryBreakerFallback(t *testing.T) {
	h := newHarness(t)
	reg, _ := newRegistry(t, h)
	tr := newTracer(t)
	call, err := resilience.Wrap(reg, "API.Flaky", func(context.Context) (string, error) { return "", errBoom },
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(100*time.Millisecond)),
		resilience.CircuitBreaker(circuitbreaker.SlidingWindowSize(2), circuitbreaker.MinimumCalls(2),
			circuitbreaker.WaitInOpen(time.Minute)),
		resilience.Fallback(func(ctx context.Context, err error) (string, error) { return "cached", nil }))
	require.NoError(t, err)

	got := tr.events(t, func(ctx context.Context) {
		v, err := call(ctx)
		require.NoError(t, err)
		assert.Equal(t, "cached", v)
	})
	assert.Equal(t, []string{
		`resilience.retry.attempt{attempt=1,error.message=boom,name=API.Flaky,wait=0.1}`,
		`resilience.circuit_breaker.transition{from=closed,name=API.Flaky,to=open}`,
		`resilience.retry.attempt{attempt=2,error.message=boom,name=API.Flaky,wait=0.1}`,
		`resilience.circuit_breaker.rejected{error.message=circuitbreaker: circuit breaker "API.Flaky" is open and does not permit the call,name=API.Flaky,retry_after=59.9}`,
		`resilience.retry.aborted{attempt=3,error.message=circuitbreaker: circuit breaker "API.Flaky" is open and does not permit the call,name=API.Flaky}`,
		`resilience.fallback.applied{error.message=circuitbreaker: circuit breaker "API.Flaky" is open and does not permit the call,name=API.Flaky}`,
	}, got)
}

// OB-3: a timeout's expiry.
func TestOB3_SpanEventsTimeout(t *testing.T) {
	h := newHarness(t)
	reg, clk := newRegistry(t, h)
	tr := newTracer(t)
	call, err := resilience.Wrap(reg, "API.Slow", func(ctx context.Context) (string, error) {
		_ = clk.Sleep(ctx, 2*time.Second)
		return "late", nil
	}, resilience.Timeout(time.Second))
	require.NoError(t, err)
	got := tr.events(t, func(ctx context.Context) { _, _ = call(ctx) })
	require.Len(t, got, 1)
	assert.Regexp(t, `^resilience\.timeout\.exceeded\{error\.message=.+,name=API\.Slow,timeout=1\}$`, got[0])
}

// OB-3: a hedge's second attempt and its win, on the context of the call.
func TestOB3_SpanEventsHedge(t *testing.T) {
	h := newHarness(t)
	reg, clk := newRegistry(t, h)
	tr := newTracer(t)
	var completes []func(string, error)
	call, err := resilience.WrapAsync(reg, "Search.Query", func(ctx context.Context) *async.Future[string] {
		f, complete := async.NewPromise[string]()
		completes = append(completes, complete)
		return f
	}, resilience.Hedge(hedge.Delay(100*time.Millisecond)))
	require.NoError(t, err)
	got := tr.events(t, func(ctx context.Context) {
		f := call(ctx)
		clk.Advance(100 * time.Millisecond)
		require.Len(t, completes, 2)
		completes[1]("fast", nil)
		_, err := f.Await(ctx)
		require.NoError(t, err)
		completes[0]("", context.Canceled)
	})
	assert.Equal(t, []string{
		`resilience.hedge.hedged{attempt=2,name=Search.Query,wait=0.1}`,
		`resilience.hedge.won{attempt=2,name=Search.Query}`,
	}, got)
}

// OB-3: no event on a span that does not record, on a context with no span, or with
// WithSpanEvents(false); the counters count either way.
func TestOB3_NoSpanEvents(t *testing.T) {
	run := func(t *testing.T, h *harness, ctx context.Context) {
		reg, _ := newRegistry(t, h)
		call, err := resilience.Wrap(reg, "API.Get", ok, resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)))
		require.NoError(t, err)
		_, _ = call(ctx)
		_, err = call(ctx)
		require.ErrorIs(t, err, ratelimit.ErrExceeded)
		assert.Equal(t, int64(1), h.collect().int(RateLimiterCalls, "name=API.Get", "outcome=rejected"))
	}
	t.Run("not sampled", func(t *testing.T) {
		tr := newTracer(t, sdktrace.WithSampler(sdktrace.NeverSample()))
		got := tr.events(t, func(ctx context.Context) {
			require.False(t, trace.SpanFromContext(ctx).IsRecording())
			run(t, newHarness(t), ctx)
		})
		assert.Empty(t, got)
	})
	t.Run("no span", func(t *testing.T) { run(t, newHarness(t), context.Background()) })
	t.Run("off", func(t *testing.T) {
		tr := newTracer(t)
		got := tr.events(t, func(ctx context.Context) { run(t, newHarness(t, resilienceotel.WithSpanEvents(false)), ctx) })
		assert.Empty(t, got)
	})
}

// OB-3: a recorder's events go to the span of the context they come with, and only the
// kinds with a span event make one.
func TestOB3_EventKindsWithoutSpanEvent(t *testing.T) {
	h := newHarness(t)
	tr := newTracer(t)
	r := h.m.Instrument(ratelimit.Layer, "rl")
	got := tr.events(t, func(ctx context.Context) {
		for _, k := range []policy.EventKind{policy.ConfigChanged, adaptivelimit.EventChanged,
			backend.EventFailed, backend.EventRecovered, backend.EventKeyFailed} {
			r.Event(ctx, policy.Event{Kind: k, Instance: "rl"})
		}
		r.Event(ctx, policy.Event{Kind: ratelimit.EventRejected, Instance: "rl", Key: "tenant", RetryAfter: time.Second})
	})
	assert.Equal(t, []string{`resilience.rate_limiter.rejected{name=rl,retry_after=1}`}, got,
		"no key without WithKeyAttribute")

	h = newHarness(t, resilienceotel.WithKeyAttribute(true))
	r = h.m.Instrument(ratelimit.Layer, "rl")
	got = tr.events(t, func(ctx context.Context) {
		r.Event(ctx, policy.Event{Kind: ratelimit.EventRejected, Instance: "rl", Key: "tenant", RetryAfter: time.Second})
	})
	assert.Equal(t, []string{`resilience.rate_limiter.rejected{key=tenant,name=rl,retry_after=1}`}, got)
}

// OB-3: a retry that spends its attempts, and the rejections of a bulkhead and an
// adaptive limit.
func TestOB3_SpanEventsRetryExhaustedBulkheadAdaptive(t *testing.T) {
	h := newHarness(t)
	reg, _ := newRegistry(t, h)
	tr := newTracer(t)
	flaky, err := resilience.Wrap(reg, "API.Flaky", func(context.Context) (string, error) { return "", errBoom },
		resilience.Retry(retry.MaxAttempts(2), retry.Delay(100*time.Millisecond)))
	require.NoError(t, err)
	var completes []func(string, error)
	pending := func(ctx context.Context) *async.Future[string] {
		f, complete := async.NewPromise[string]()
		completes = append(completes, complete)
		return f
	}
	pool, err := resilience.WrapAsync(reg, "Pool.Get", pending, resilience.Bulkhead(bulkhead.MaxConcurrent(1)))
	require.NoError(t, err)
	db, err := resilience.WrapAsync(reg, "DB.Write", pending, resilience.AdaptiveLimit(adaptivelimit.InitialLimit(1)))
	require.NoError(t, err)

	got := tr.events(t, func(ctx context.Context) {
		_, err := flaky(ctx)
		require.ErrorIs(t, err, errBoom)
		_ = pool(ctx)
		_, err = pool(ctx).Await(ctx)
		require.ErrorIs(t, err, bulkhead.ErrFull)
		_ = db(ctx)
		_, err = db(ctx).Await(ctx)
		require.ErrorIs(t, err, adaptivelimit.ErrLimitExceeded)
	})
	for _, complete := range completes {
		complete("done", nil)
	}
	require.Len(t, got, 4)
	assert.Equal(t, `resilience.retry.attempt{attempt=1,error.message=boom,name=API.Flaky,wait=0.1}`, got[0])
	assert.Equal(t, `resilience.retry.exhausted{attempt=2,error.message=boom,name=API.Flaky}`, got[1])
	assert.Regexp(t, `^resilience\.bulkhead\.rejected\{error\.message=bulkhead: .+,name=Pool\.Get\}$`, got[2])
	assert.Regexp(t, `^resilience\.adaptive_limit\.rejected\{error\.message=.+,name=DB\.Write\}$`, got[3])
}

// A kind of a policy of the user's own, with a span event and attributes of each type.
var cacheMissed = policy.RegisterEventKind(policy.EventKindInfo{Name: "CacheMissed", Layer: "cache",
	SpanEvent: "app.cache.missed", Attrs: []policy.EventAttr{
		{Key: "tier", SpanValue: func(v slog.Value) slog.Value { return slog.StringValue("tier-" + v.String()) }},
		{Key: "age"}, {Key: "size"}}})

// SPEC OB-7: the span event of a kind is the one it was registered with, and carries its
// attributes: a duration in seconds, a number or a string as it is, converted first by
// the attribute's SpanValue; a breaker's states in snake_case.
func TestOB7_SpanEventsOfKinds(t *testing.T) {
	h := newHarness(t)
	tr := newTracer(t)
	r := h.m.Instrument(circuitbreaker.Layer, "cb")
	got := tr.events(t, func(ctx context.Context) {
		r.Event(ctx, policy.Event{Kind: circuitbreaker.EventTransition, Instance: "cb", Attrs: policy.EventAttrs{
			slog.String("from", "open"), slog.String("to", "half-open")}})
		r.Event(ctx, policy.Event{Kind: cacheMissed, Instance: "users", Attempt: 2, Attrs: policy.EventAttrs{
			slog.String("tier", "l2"), slog.Duration("age", 1500*time.Millisecond), slog.Int("size", 3)}})
		r.Event(ctx, policy.Event{Kind: cacheMissed, Instance: "users",
			Attrs: policy.EventAttrs{slog.Bool("hit", false), slog.Float64("ratio", 0.5)}})
	})
	assert.Equal(t, []string{
		`resilience.circuit_breaker.transition{from=open,name=cb,to=half_open}`,
		`app.cache.missed{age=1.5,attempt=2,name=users,size=3,tier=tier-l2}`,
		`app.cache.missed{hit=false,name=users,ratio=0.5}`,
	}, got)
}
