package retrybudget_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/retrybudget"
	"github.com/resilience4go/resilience4go/resilience"
)

var errBoom = errors.New("boom")

// newRegistry returns a registry on a manual clock, with its events.
func newRegistry(t *testing.T, opts ...resilience.RegistryOption) (*resilience.Registry, *clock.Manual, *[]policy.Event) {
	t.Helper()
	clk := clock.NewManual()
	var events []policy.Event
	reg, err := resilience.NewRegistry(append([]resilience.RegistryOption{resilience.WithClock(clk),
		resilience.WithEventListener(func(e policy.Event) { events = append(events, e) })}, opts...)...)
	require.NoError(t, err)
	return reg, clk, &events
}

// failing returns a dependency that fails every call with (5, errBoom), and counts them.
func failing(n *int) func(context.Context) (int, error) {
	return func(context.Context) (int, error) { *n++; return 5, errBoom }
}

// kinds returns the kinds of events, in order.
func kinds(events []policy.Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Kind.String())
	}
	return out
}

// SPEC RB-4: a retry the budget refuses is not made: the call returns its last attempt's
// result and error as they are; the budget publishes RetryBudgetRefused (its own id, the
// retry's layer and id, the attempt refused) and the retry RetryAborted.
func TestRB4_RefusedRetryReturnsTheLastOutcome(t *testing.T) {
	reg, _, events := newRegistry(t)
	n := 0
	call, err := resilience.Wrap(reg, "Stock.Get", failing(&n),
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(0)),
		resilience.RetryBudget(retrybudget.Ratio(0), retrybudget.MinPerSecond(0.1), retrybudget.Name("deps"))) // 1 per 10s
	require.NoError(t, err)

	v, err := call(context.Background())
	assert.Equal(t, 5, v)
	assert.Same(t, errBoom, err, "the last attempt's error, as it is")
	assert.Equal(t, 2, n, "attempt 3 refused")
	assert.Equal(t, []string{"RetryAttempt", "RetryBudgetRefused", "RetryAborted"}, kinds(*events))
	refused := (*events)[1]
	assert.Equal(t, "deps", refused.Instance)
	assert.Equal(t, 3, refused.Attempt)
	assert.Equal(t, "retry", refused.Attr("by_layer").String())
	assert.Equal(t, "Stock.Get", refused.Attr("by_instance").String())
	assert.Equal(t, 2, (*events)[2].Attempt)
	assert.Same(t, errBoom, (*events)[2].Err)

	*events = nil
	v, err = call(context.Background())
	assert.Equal(t, 5, v)
	assert.Same(t, errBoom, err)
	assert.Equal(t, 3, n, "no retry at all now")
	assert.Equal(t, []string{"RetryBudgetRefused", "RetryAborted"}, kinds(*events))

	b, err := resilience.Lookup[*retrybudget.Budget](reg, retrybudget.Layer, "deps")
	require.NoError(t, err)
	assert.Equal(t, retrybudget.Snapshot{Instance: "deps", Calls: 2, ExtraAttempts: 1, Available: 0, Refused: 2}, b.Snapshot())
}

// SPEC RB-3: a budget shared by name counts the calls and extra attempts of every
// composition that names it; a composition without a retry only adds calls; the retry
// shared by name asks, in each composition, that composition's budget.
func TestRB3_SharedByName(t *testing.T) {
	reg, _, _ := newRegistry(t)
	var na, nb, nc int
	shared := resilience.RetryBudget(retrybudget.Ratio(0.5), retrybudget.MinPerSecond(0), retrybudget.Name("deps"))
	a, err := resilience.Wrap(reg, "A", failing(&na), resilience.Retry(retry.MaxAttempts(3), retry.Delay(0)), shared)
	require.NoError(t, err)
	b, err := resilience.Wrap(reg, "B", failing(&nb), resilience.Retry(retry.MaxAttempts(3), retry.Delay(0)), shared)
	require.NoError(t, err)
	c, err := resilience.Wrap(reg, "C", failing(&nc), shared)
	require.NoError(t, err)
	// An unbudgeted composition with the same shared retry is not limited.
	var nd int
	d, err := resilience.Wrap(reg, "D", failing(&nd), resilience.Retry(retry.MaxAttempts(3), retry.Delay(0)))
	require.NoError(t, err)

	ctx := context.Background()
	for range 4 {
		_, _ = c(ctx) // 4 calls, no retry
	}
	_, _ = a(ctx) // 5 calls: 2 extras allowed (< 2.5), both used
	_, _ = b(ctx) // 6 calls: 3 allowed, 1 left
	assert.Equal(t, []int{3, 2, 4}, []int{na, nb, nc})
	_, _ = d(ctx)
	assert.Equal(t, 3, nd)
	budget, err := resilience.Lookup[*retrybudget.Budget](reg, retrybudget.Layer, "deps")
	require.NoError(t, err)
	assert.Equal(t, retrybudget.Snapshot{Instance: "deps", Calls: 6, ExtraAttempts: 3, Available: 0, Refused: 1}, budget.Snapshot())
}

// SPEC RB-5: a hedge the budget refuses is skipped as one its own budget refuses
// (HedgeSkipped, no further hedge), and is not counted in the hedge's own budget.
func TestRB5_RefusedHedgeIsSkipped(t *testing.T) {
	reg, clk, events := newRegistry(t)
	var started int
	dep := func(ctx context.Context) *async.Future[int] {
		started++
		f, complete := async.NewPromise[int]()
		clk.AfterFunc(time.Second, func() { complete(started, nil) })
		return f
	}
	call, err := resilience.WrapAsync(reg, "Quotes.Get", dep,
		resilience.Hedge(hedge.Delay(100*time.Millisecond), hedge.MaxAttempts(3)),
		resilience.RetryBudget(retrybudget.Ratio(0), retrybudget.MinPerSecond(0.1))) // 1 per 10s
	require.NoError(t, err)

	f := call(context.Background())
	clk.Advance(200 * time.Millisecond)
	assert.Equal(t, 2, started, "the first hedge is allowed, the second refused")
	assert.Equal(t, []string{"Hedged", "RetryBudgetRefused", "HedgeSkipped"}, kinds(*events))
	assert.Equal(t, "hedge", (*events)[1].Attr("by_layer").String())
	assert.Equal(t, 3, (*events)[2].Attempt)
	clk.Advance(time.Second)
	_, err = f.Await(context.Background())
	require.NoError(t, err)

	h, err := resilience.Lookup[*hedge.Hedge](reg, hedge.Layer, "Quotes.Get")
	require.NoError(t, err)
	assert.Equal(t, 1, h.Snapshot().Hedges, "the refused hedge is not counted by the hedge's own budget")
}

// SPEC RB-6: an asynchronous retry whose wait the caller's context ends gives back the
// extra attempt the budget allowed for it.
func TestRB6_RetryGivesBackOnContextEnd(t *testing.T) {
	reg, clk, _ := newRegistry(t)
	call, err := resilience.WrapAsync(reg, "Stock.Get",
		func(context.Context) *async.Future[int] { return async.Failed[int](errBoom) },
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(time.Second)),
		resilience.RetryBudget(retrybudget.Name("deps")))
	require.NoError(t, err)
	budget, err := resilience.Lookup[*retrybudget.Budget](reg, retrybudget.Layer, "deps")
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	f := call(ctx)
	assert.Equal(t, 1, budget.Snapshot().ExtraAttempts, "counted when allowed, before the wait")
	cancel()
	_, err = f.Await(context.Background())
	assert.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, budget.Snapshot().ExtraAttempts, "given back")

	f = call(context.Background())
	f.Cancel()
	assert.Zero(t, budget.Snapshot().ExtraAttempts, "given back when the future is canceled")

	f = call(context.Background())
	clk.Advance(2 * time.Second)
	_, err = f.Await(context.Background())
	assert.ErrorIs(t, err, errBoom)
	assert.Equal(t, 2, budget.Snapshot().ExtraAttempts, "made, so kept")
}

// SPEC RB-10: a reload changes a running budget at once; a new window keeps the counts;
// an invalid value is refused with its code and changes nothing.
func TestRB10_Reload(t *testing.T) {
	props := map[string]string{"instances.deps.retryBudget.ratio": "0", "instances.deps.retryBudget.minPerSecond": "0"}
	reg, clk, events := newRegistry(t, resilience.WithProperties(props))
	n := 0
	call, err := resilience.Wrap(reg, "Stock.Get", failing(&n),
		resilience.Retry(retry.MaxAttempts(2), retry.Delay(0)), resilience.RetryBudget(retrybudget.Name("deps")))
	require.NoError(t, err)
	_, _ = call(context.Background())
	assert.Equal(t, 1, n, "no budget")

	*events = nil
	require.NoError(t, reg.Reload(map[string]string{"instances.deps.retryBudget.ratio": "1",
		"instances.deps.retryBudget.minPerSecond": "0", "instances.deps.retryBudget.window": "1m"}))
	require.Len(t, *events, 1)
	assert.Equal(t, policy.ConfigChanged, (*events)[0].Kind)
	assert.Equal(t, []string{"ratio", "window"}, (*events)[0].Changed)
	_, _ = call(context.Background())
	assert.Equal(t, 3, n, "a ratio of 1: 1 extra per call")
	budget, err := resilience.Lookup[*retrybudget.Budget](reg, retrybudget.Layer, "deps")
	require.NoError(t, err)
	assert.Equal(t, 2, budget.Snapshot().Calls, "the call before the reload still counts")
	clk.Advance(59 * time.Second)
	assert.Equal(t, 2, budget.Snapshot().Calls, "in the new window of 1m")

	err = reg.Reload(map[string]string{"instances.deps.retryBudget.ratio": "2"})
	var ce *policy.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "R4C-ATR-007", ce.Code)
	assert.Equal(t, 1.0, budget.Config().Ratio, "unchanged")

	require.NoError(t, reg.Reload(map[string]string{"instances.deps.retryBudget.enabled": "false"}))
	assert.True(t, budget.Config().Disabled)
	assert.Equal(t, -1, budget.Snapshot().Available)
}

// SPEC RB-10: Reconfigure checks as New does, and publishes the names of what changed.
func TestRB10_Reconfigure(t *testing.T) {
	b, _, events := newBudget(t)
	c := b.Config()
	require.NoError(t, b.Reconfigure(c))
	assert.Empty(t, *events, "nothing changed")
	c.MinPerSecond, c.Disabled = 1, true
	require.NoError(t, b.CheckReconfigure(c))
	require.NoError(t, b.Reconfigure(c))
	assert.Equal(t, []string{"enabled", "minPerSecond"}, (*events)[0].Changed)
	c.Window = -1
	var ce *policy.ConfigError
	require.ErrorAs(t, b.CheckReconfigure(c), &ce)
	assert.Equal(t, "R4C-ATR-004", ce.Code)
	require.ErrorAs(t, b.Reconfigure(c), &ce)
	assert.Equal(t, 10*time.Second, b.Config().Window)
}

// SPEC RB-6: a synchronous retry whose wait the caller's context ends gives back the
// extra attempt the budget allowed for it.
func TestRB6_SyncRetryGivesBackOnContextEnd(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	reg, _, _ := newRegistry(t, resilience.WithEventListener(func(e policy.Event) {
		if e.Kind == retry.EventAttempt {
			cancel() // during the wait that follows
		}
	}))
	n := 0
	call, err := resilience.Wrap(reg, "Stock.Get", failing(&n),
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(time.Second)), resilience.RetryBudget(retrybudget.Name("deps")))
	require.NoError(t, err)
	_, err = call(ctx)
	assert.ErrorIs(t, err, errBoom)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, n)
	budget, err := resilience.Lookup[*retrybudget.Budget](reg, retrybudget.Layer, "deps")
	require.NoError(t, err)
	assert.Equal(t, retrybudget.Snapshot{Instance: "deps", Calls: 1, Available: 100}, budget.Snapshot())
}

// SPEC RB-2: through a registry's composition, a call the budget counts and a retry it
// allows allocate nothing.
func TestRB2_CompositionZeroAlloc(t *testing.T) {
	reg, clk, _ := newRegistry(t)
	fails := 0
	call, err := resilience.Wrap(reg, "Stock.Get", func(context.Context) (int, error) {
		if fails++; fails%2 == 1 {
			return 0, errBoom
		}
		return 1, nil
	}, resilience.Retry(retry.MaxAttempts(3), retry.Delay(0)), resilience.RetryBudget(retrybudget.Ratio(1)))
	require.NoError(t, err)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(1000, func() {
		clk.Advance(time.Millisecond)
		if _, err := call(ctx); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs, "a call that fails once, then is retried with the budget's leave")
	ok, err := resilience.Wrap(reg, "Stock.List", func(context.Context) (int, error) { return 1, nil },
		resilience.Retry(), resilience.RetryBudget())
	require.NoError(t, err)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = ok(ctx) }), "the admitted path")
}
