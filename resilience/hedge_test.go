package resilience_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// answerAfter returns a dependency whose attempt i (from 1) answers "answer i" after
// delays[i-1] on clk; canceling its future stops it. It records each attempt's context.
func answerAfter(clk *clock.Manual, ctxs *[]context.Context, delays ...time.Duration) func(context.Context) *async.Future[string] {
	return func(ctx context.Context) *async.Future[string] {
		*ctxs = append(*ctxs, ctx)
		n := len(*ctxs)
		var t clock.Timer
		f, complete := async.NewCancelablePromise[string](func() bool { t.Stop(); return false })
		t = clk.AfterFunc(delays[n-1], func() { complete("answer "+string(rune('0'+n)), nil) })
		return f
	}
}

// SPEC HG-7, CO-1: a hedge of delay 1s around a breaker and a bulkhead, with a
// dependency that answers the first attempt after 3s and the second after 100ms: the call
// completes at 1.1s with the second answer; the first attempt's context is done and its
// bulkhead slot is free at 1.1s; the breaker recorded exactly one success.
func TestHG7_SlowFirstAttemptIsHedged(t *testing.T) {
	var events []policy.Event
	reg, clk := newRegistry(t, resilience.WithEventListener(func(e policy.Event) { events = append(events, e) }))
	var ctxs []context.Context
	call, err := resilience.WrapAsync(reg, "Quotes.Get", answerAfter(clk, &ctxs, 3*time.Second, 100*time.Millisecond),
		resilience.Hedge(hedge.Delay(time.Second)),
		resilience.CircuitBreaker(),
		resilience.Bulkhead(bulkhead.MaxConcurrent(2)))
	require.NoError(t, err)

	f := call(context.Background())
	clk.Advance(time.Second)
	require.Len(t, ctxs, 2, "the hedge started at 1s")
	bh, err := resilience.Lookup[*bulkhead.Bulkhead](reg, bulkhead.Layer, "Quotes.Get")
	require.NoError(t, err)
	assert.Zero(t, bh.Snapshot().AvailableSlots, "both attempts hold a slot")
	clk.Advance(99 * time.Millisecond)
	_, done, _ := f.Result()
	assert.False(t, done, "not done before 1.1s")
	clk.Advance(time.Millisecond)
	v, done, err := f.Result()
	require.True(t, done, "done at 1.1s")
	require.NoError(t, err)
	assert.Equal(t, "answer 2", v)
	assert.ErrorIs(t, ctxs[0].Err(), context.Canceled, "the first attempt's context is done")
	assert.Equal(t, 2, bh.Snapshot().AvailableSlots, "the first attempt's slot is free")
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "Quotes.Get")
	require.NoError(t, err)
	s := cb.Snapshot()
	assert.Equal(t, 1, s.BufferedCalls, "the canceled attempt is not recorded")
	assert.Zero(t, s.FailedCalls)
	kinds := make([]policy.EventKind, 0, len(events))
	for _, e := range events {
		kinds = append(kinds, e.Kind)
	}
	assert.Equal(t, []policy.EventKind{hedge.EventHedged, hedge.EventWon}, kinds)
	assert.Zero(t, clk.PendingTasks(), "no timer is left behind")
}

// SPEC HG-7, RL-9: a permit that the losing attempt reserved and had not started with goes
// back. 1 permit per second, burst 1, maxWait 5s: attempt 1 takes the permit at 0, the
// hedge at 100ms reserves the permit of 1s; attempt 1 answers at 200ms, so the hedge is
// canceled and its permit is free again at 1s.
func TestHG7_LosingAttemptGivesItsPermitBack(t *testing.T) {
	reg, clk := newRegistry(t)
	var ctxs []context.Context
	call, err := resilience.WrapAsync(reg, "Quotes.Get", answerAfter(clk, &ctxs, 200*time.Millisecond, time.Millisecond),
		resilience.Hedge(hedge.Delay(100*time.Millisecond)),
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(5*time.Second)))
	require.NoError(t, err)
	rl, err := reg.RateLimiter("Quotes.Get")
	require.NoError(t, err)

	f := call(context.Background())
	clk.Advance(100 * time.Millisecond)
	require.Len(t, ctxs, 1, "the hedge waits for its permit")
	clk.Advance(100 * time.Millisecond)
	v, done, err := f.Result()
	require.True(t, done)
	require.NoError(t, err)
	assert.Equal(t, "answer 1", v)
	clk.Advance(800 * time.Millisecond)
	assert.Equal(t, 1, rl.Snapshot().AvailablePermits, "the hedge's permit came back")
	assert.Len(t, ctxs, 1, "the canceled hedge never ran")
	assert.Zero(t, clk.PendingTasks())
}

// SPEC HG-18: a hedge guards calls that return a future only. Wrapping a synchronous
// function with one is R4C-HDG-001, and so is Execute on a pipeline with one, whose
// ExecuteAsync hedges.
func TestHG18_SyncCompositionIsRefused(t *testing.T) {
	reg, _ := newRegistry(t)
	fn := func(context.Context) (int, error) { return 1, nil }
	_, err := resilience.Wrap(reg, "Svc.A", fn, resilience.Hedge())
	requireCode(t, err, "R4C-HDG-001")
	_, err = resilience.Wrap1(reg, "Svc.B", func(context.Context, int) (int, error) { return 1, nil }, resilience.Hedge())
	requireCode(t, err, "R4C-HDG-001")
	_, err = resilience.Wrap2(reg, "Svc.C", func(context.Context, int, int) (int, error) { return 1, nil },
		resilience.Hedge(), resilience.CircuitBreaker())
	requireCode(t, err, "R4C-HDG-001")
	_, err = resilience.Lookup[*hedge.Hedge](reg, hedge.Layer, "Svc.A")
	requireCode(t, err, r4c.UnknownInstance) // a failed wrap registers nothing

	p, err := resilience.NewPipeline[int](reg, "Svc.P", resilience.Hedge())
	require.NoError(t, err)
	calls := 0
	_, err = p.Execute(context.Background(), func(context.Context) (int, error) { calls++; return 1, nil })
	requireCode(t, err, "R4C-HDG-001")
	assert.Zero(t, calls)
	v, err := p.ExecuteAsync(context.Background(), func(context.Context) *async.Future[int] { return async.Completed(7) }).
		Await(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	h, err := resilience.Lookup[*hedge.Hedge](reg, hedge.Layer, "Svc.P")
	require.NoError(t, err)
	assert.Equal(t, "Svc.P", h.Snapshot().Instance)
}

// SPEC HG-19: a hedge and a retry in one composition is R4C-HDG-002, sync or async, in any
// order of the specs, and whatever order is named.
func TestHG19_HedgeWithRetryIsRefused(t *testing.T) {
	reg, _ := newRegistry(t)
	fn := func(context.Context) *async.Future[int] { return async.Completed(1) }
	for _, specs := range [][]resilience.Spec{
		{resilience.Hedge(), resilience.Retry()},
		{resilience.Retry(retry.MaxAttempts(2)), resilience.Hedge()},
		{resilience.Hedge(), resilience.Retry(), resilience.Order(hedge.Layer, retry.Layer)},
	} {
		_, err := resilience.WrapAsync(reg, "Svc.A", fn, specs...)
		requireCode(t, err, "R4C-HDG-002")
	}
	_, err := resilience.Wrap(reg, "Svc.B", func(context.Context) (int, error) { return 1, nil },
		resilience.Retry(), resilience.Hedge())
	requireCode(t, err, "R4C-HDG-002")
	_, err = resilience.NewPipeline[int](reg, "Svc.P", resilience.Retry(), resilience.Hedge())
	requireCode(t, err, "R4C-HDG-002")
	assert.Empty(t, reg.Snapshot().Policies, "a failed wrap registers nothing")
}

// SPEC CO-1: the hedge takes the retry's place: outside the breaker, so that each attempt
// asks the breaker; an open breaker refuses every attempt and the call fails with its
// error, after the hedge that the breaker refused at once.
func TestCO1_HedgeIsOutsideTheBreaker(t *testing.T) {
	reg, _ := newRegistry(t)
	calls := 0
	call, err := resilience.WrapAsync(reg, "Svc.A", func(context.Context) *async.Future[int] { calls++; return async.Completed(1) },
		resilience.CircuitBreaker(), resilience.Hedge())
	require.NoError(t, err)
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "Svc.A")
	require.NoError(t, err)
	_ = cb.TransitionTo(circuitbreaker.ForcedOpen)
	_, err = call(context.Background()).Await(context.Background())
	require.ErrorIs(t, err, circuitbreaker.ErrOpen)
	assert.Zero(t, calls)
}

// SPEC HG-16, RG-2, RG-3, RG-4: a hedge is shared by name, its keys are read from the configuration,
// and its state is in the registry's snapshot.
func TestHG16_ConfigurationAndSnapshot(t *testing.T) {
	reg, clk := newRegistry(t, resilience.WithProperties(map[string]string{
		"defaults.hedge.delay":               "250ms",
		"instances.Shared.hedge.maxAttempts": "3",
	}))
	var ctxs []context.Context
	dep := answerAfter(clk, &ctxs, time.Hour, time.Hour, 10*time.Millisecond)
	a, err := resilience.WrapAsync(reg, "Svc.A", dep, resilience.Hedge(hedge.Name("Shared")))
	require.NoError(t, err)
	_, err = resilience.WrapAsync(reg, "Svc.B", dep, resilience.Hedge(hedge.Name("Shared")))
	require.NoError(t, err)
	_, err = resilience.WrapAsync(reg, "Svc.C", dep, resilience.Hedge(hedge.Name("Shared"), hedge.MaxAttempts(4)))
	require.NoError(t, err, "instances.Shared.hedge.maxAttempts wins over the code: the same configuration")
	_, err = resilience.WrapAsync(reg, "Svc.D", dep, resilience.Hedge(hedge.Name("Shared"), hedge.Delay(time.Second)))
	requireCode(t, err, r4c.Conflict) // the code's delay wins over defaults.hedge.delay
	h, err := resilience.Lookup[*hedge.Hedge](reg, hedge.Layer, "Shared")
	require.NoError(t, err)
	snap := h.Snapshot()
	assert.Equal(t, 250*time.Millisecond, snap.Delay)
	assert.Equal(t, 3, snap.MaxAttempts)

	f := a(context.Background())
	clk.Advance(510 * time.Millisecond)
	v, done, err := f.Result()
	require.True(t, done)
	require.NoError(t, err)
	assert.Equal(t, "answer 3", v, "the third attempt started at 500ms and answered at 510ms")
	var hedges []string
	for _, p := range reg.Snapshot().Policies {
		if s, ok := p.State.(hedge.Snapshot); ok {
			hedges = append(hedges, s.Instance)
		}
	}
	assert.Equal(t, []string{"Shared"}, hedges)
}

// SPEC HG-18: the one-line idiom for a synchronous function: wrap async.Go around it.
func TestHG18_SyncFunctionThroughAsyncGo(t *testing.T) {
	reg, err := resilience.NewRegistry()
	require.NoError(t, err)
	search := func(ctx context.Context) (string, error) { return "found", nil }
	hedged, err := resilience.WrapAsync(reg, "Search.Find",
		func(ctx context.Context) *async.Future[string] { return async.Go(ctx, search) },
		resilience.Hedge(hedge.Delay(50*time.Millisecond)))
	require.NoError(t, err)
	v, err := hedged(context.Background()).Await(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "found", v)
}
