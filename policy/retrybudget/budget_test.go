package retrybudget_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/retrybudget"
)

// newBudget returns a budget on a manual clock, with its events.
func newBudget(t *testing.T, opts ...retrybudget.Option) (*retrybudget.Budget, *clock.Manual, *[]policy.Event) {
	t.Helper()
	clk := clock.NewManual()
	var events []policy.Event
	b, err := retrybudget.New(append([]retrybudget.Option{retrybudget.WithClock(clk),
		retrybudget.OnEvent(func(e policy.Event) { events = append(events, e) })}, opts...)...)
	require.NoError(t, err)
	return b, clk, &events
}

// calls makes n calls through b, each a success.
func calls(b *retrybudget.Budget, n int) {
	call := retrybudget.NewPolicy[int](b).Decorate(func(context.Context) (int, error) { return 1, nil })
	for range n {
		_, _ = call(context.Background())
	}
}

// allowed asks b for extra attempts until it refuses one, and returns how many it allowed.
func allowed(b *retrybudget.Budget) int {
	n := 0
	for {
		if _, ok := b.Gate().TryAttempt(context.Background(), "retry", "r", 2); !ok {
			return n
		}
		n++
	}
}

// SPEC RB-1: an extra attempt is allowed while extras < max(ratio × calls, minPerSecond ×
// window), exactly.
func TestRB1_Rule(t *testing.T) {
	b, _, _ := newBudget(t, retrybudget.Ratio(0.1), retrybudget.MinPerSecond(1))
	calls(b, 200)
	assert.Equal(t, 20, allowed(b), "10% of 200")
	assert.Equal(t, retrybudget.Snapshot{Calls: 200, ExtraAttempts: 20, Available: 0, Refused: 1}, b.Snapshot())

	b, _, _ = newBudget(t, retrybudget.Ratio(0.1), retrybudget.MinPerSecond(1))
	calls(b, 5)
	assert.Equal(t, 10, allowed(b), "the floor: 1/s over 10s")

	b, _, _ = newBudget(t, retrybudget.Ratio(0.2), retrybudget.MinPerSecond(0))
	calls(b, 15)
	assert.Equal(t, 3, allowed(b), "0.2 of 15 is 3 exactly")
	calls(b, 1)
	assert.Equal(t, 1, allowed(b), "0.2 of 16 is 3.2: a fourth starts below it")

	b, _, _ = newBudget(t, retrybudget.Ratio(0), retrybudget.MinPerSecond(0.25), retrybudget.Window(10*time.Second))
	assert.Equal(t, 3, allowed(b), "a floor of 2.5: 0, 1 and 2 are below it")

	b, _, _ = newBudget(t, retrybudget.Ratio(0), retrybudget.MinPerSecond(0))
	calls(b, 1000)
	assert.Zero(t, allowed(b), "no budget at all")
}

// SPEC RB-2: the window is 20 buckets of window/20: a call or an extra attempt counts for
// more than window − window/20 and at most window.
func TestRB2_Window(t *testing.T) {
	const w = 10 * time.Second
	b, clk, _ := newBudget(t, retrybudget.Ratio(1), retrybudget.MinPerSecond(0), retrybudget.Window(w))
	calls(b, 4)
	clk.Advance(w / 20)
	calls(b, 2)
	assert.Equal(t, 6, allowed(b))
	clk.AdvanceTo(w - 1)
	assert.Equal(t, retrybudget.Snapshot{Calls: 6, ExtraAttempts: 6, Available: 0, Refused: 1}, b.Snapshot())
	clk.AdvanceTo(w)
	assert.Equal(t, 2, b.Snapshot().Calls, "the first bucket left at 10s")
	assert.Equal(t, 6, b.Snapshot().ExtraAttempts, "the extra attempts, counted at w/20, stay")
	clk.AdvanceTo(w + w/20)
	assert.Equal(t, retrybudget.Snapshot{Available: 0, Refused: 1}, b.Snapshot())
}

// SPEC RB-6: an extra attempt given back no longer counts; one counted by a disabled
// budget (at -1) gives nothing back.
func TestRB6_ReturnAttempt(t *testing.T) {
	b, clk, _ := newBudget(t, retrybudget.Ratio(0), retrybudget.MinPerSecond(0.2)) // 2 per window
	at, ok := b.Gate().TryAttempt(context.Background(), "retry", "r", 2)
	require.True(t, ok)
	_, ok = b.Gate().TryAttempt(context.Background(), "retry", "r", 2)
	require.True(t, ok)
	clk.Advance(time.Second)
	b.Gate().ReturnAttempt(at)
	assert.Equal(t, 1, b.Snapshot().ExtraAttempts)
	assert.Equal(t, 1, allowed(b), "the one given back is free again")
	b.Gate().ReturnAttempt(-1)
	assert.Equal(t, 2, b.Snapshot().ExtraAttempts)
	clk.Advance(time.Hour)
	b.Gate().ReturnAttempt(at) // long out of the window: nothing
	assert.Zero(t, b.Snapshot().ExtraAttempts)
}

// SPEC RB-4: a refusal publishes EventRefused, with the call's context, the budget's id,
// the attempt refused and the asking layer and instance.
func TestRB4_RefusedEvent(t *testing.T) {
	b, clk, events := newBudget(t, retrybudget.Ratio(0), retrybudget.MinPerSecond(0), retrybudget.Name("deps"))
	clk.Advance(time.Second)
	at, ok := b.Gate().TryAttempt(context.Background(), "hedge", "Quotes.Get", 3)
	assert.False(t, ok)
	assert.Zero(t, at)
	require.Len(t, *events, 1)
	e := (*events)[0]
	assert.Equal(t, retrybudget.EventRefused, e.Kind)
	assert.Equal(t, "deps", e.Instance)
	assert.Equal(t, 3, e.Attempt)
	assert.Equal(t, time.Second, e.At)
	assert.Equal(t, "hedge", e.Attr("by_layer").String())
	assert.Equal(t, "Quotes.Get", e.Attr("by_instance").String())
	assert.Equal(t, "RetryBudgetRefused", e.Kind.String())
	assert.Equal(t, int64(1), b.Snapshot().Refused)
}

// SPEC RB-7: a disabled budget allows every extra attempt, counts nothing, and its
// snapshot says -1.
func TestRB7_Disabled(t *testing.T) {
	b, _, events := newBudget(t, retrybudget.Ratio(0), retrybudget.MinPerSecond(0), retrybudget.Enabled(false))
	calls(b, 10)
	for range 100 {
		at, ok := b.Gate().TryAttempt(context.Background(), "retry", "r", 2)
		require.True(t, ok)
		assert.Equal(t, time.Duration(-1), at)
	}
	assert.Equal(t, retrybudget.Snapshot{Available: -1}, b.Snapshot())
	assert.Empty(t, *events)
}

// SPEC RB-3: the layer counts each call once as it arrives, synchronous or returning a
// future, and returns next's outcome as it is; a nil or done context is not counted and
// next is not called.
func TestRB3_CountsCalls(t *testing.T) {
	b, _, _ := newBudget(t)
	errBoom := errors.New("boom")
	p := retrybudget.NewPolicy[int](b)
	n := 0
	call := p.Decorate(func(context.Context) (int, error) { n++; return 7, errBoom })
	v, err := call(context.Background())
	assert.Equal(t, 7, v)
	assert.Same(t, errBoom, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = call(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	_, err = call(nil) //nolint:staticcheck // a nil context is refused
	assert.ErrorIs(t, err, policy.ErrNilContext)
	assert.Equal(t, 1, n)

	acall := p.DecorateAsync(func(context.Context) *async.Future[int] { n++; return async.Completed(8) })
	v, err = acall(context.Background()).Await(context.Background())
	assert.Equal(t, 8, v)
	assert.NoError(t, err)
	_, err = acall(ctx).Await(context.Background())
	assert.ErrorIs(t, err, context.Canceled)
	nilFuture := p.DecorateAsync(func(context.Context) *async.Future[int] { return nil })
	_, err = nilFuture(context.Background()).Await(context.Background())
	assert.ErrorIs(t, err, async.ErrNilFuture)
	assert.Equal(t, 3, b.Snapshot().Calls)
	assert.Equal(t, 2, n)
}

// SPEC RB-2: counting a call, and an extra attempt that is allowed, allocate nothing.
func TestRB2_ZeroAlloc(t *testing.T) {
	b, clk, _ := newBudget(t, retrybudget.Ratio(1))
	call := retrybudget.NewPolicy[int](b).Decorate(func(context.Context) (int, error) { return 1, nil })
	done := async.Completed(1)
	acall := retrybudget.NewPolicy[int](b).DecorateAsync(func(context.Context) *async.Future[int] { return done })
	g := b.Gate()
	ctx := context.Background()
	allocs := testing.AllocsPerRun(1000, func() {
		clk.Advance(time.Millisecond)
		_, _ = call(ctx)
		_ = acall(ctx)
		_, _ = g.TryAttempt(ctx, "retry", "r", 2)
	})
	assert.Zero(t, allocs)
}

// SPEC RB-1: the counts stay exact under concurrent use (run with -race): each extra
// attempt is asked after its own call, so the extra attempts end at exactly the ratio.
func TestRB1_Concurrent(t *testing.T) {
	b, err := retrybudget.New(retrybudget.WithClock(clock.NewManual()), retrybudget.Ratio(0.5),
		retrybudget.MinPerSecond(0), retrybudget.Window(time.Minute))
	require.NoError(t, err)
	call := retrybudget.NewPolicy[int](b).Decorate(func(context.Context) (int, error) { return 1, nil })
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				_, _ = call(context.Background())
				if _, yes := b.Gate().TryAttempt(context.Background(), "retry", "r", 2); yes {
					mu.Lock()
					ok++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	s := b.Snapshot()
	assert.Equal(t, 8000, s.Calls)
	assert.Equal(t, ok, s.ExtraAttempts)
	assert.Equal(t, 4000, s.ExtraAttempts)
	assert.Equal(t, int64(4000), s.Refused)
}
