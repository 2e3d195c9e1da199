package chaos_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/chaos"
)

var errUnavailable = errors.New("inventory unavailable")

// events keeps the events published to its listener.
type events struct{ list []policy.Event }

func (e *events) listen(ev policy.Event) { e.list = append(e.list, ev) }

// kinds returns the "kind" attribute of each ChaosInjected event, in order.
func (e *events) kinds() []string {
	var out []string
	for _, ev := range e.list {
		if ev.Kind == chaos.EventInjected {
			out = append(out, ev.Attr("kind").String())
		}
	}
	return out
}

// newChaos builds a chaos policy on a manual clock, with a listener.
func newChaos(t *testing.T, opts ...chaos.Option) (*chaos.Chaos, *clock.Manual, *events) {
	t.Helper()
	clk := clock.NewManual()
	ev := &events{}
	c, err := chaos.New(append([]chaos.Option{chaos.WithClock(clk), chaos.OnEvent(ev.listen)}, opts...)...)
	require.NoError(t, err)
	return c, clk, ev
}

// binomialBounds returns the two-sided bounds, at z standard deviations (the normal
// approximation), of the number of successes of n trials of probability p: those
// outside have a chance of about 0.1% for z = 3.29.
func binomialBounds(n int, p, z float64) (lo, hi int) {
	mean := float64(n) * p
	sd := math.Sqrt(float64(n) * p * (1 - p))
	return int(math.Ceil(mean - z*sd)), int(math.Floor(mean + z*sd))
}

// injectedOf makes n calls one after another through c and returns how many were
// injected into (they fail with ErrInjected) and how many reached the function.
func injectedOf(t *testing.T, c *chaos.Chaos, n int) (injected, ran int) {
	t.Helper()
	call := chaos.NewPolicy[int](c).Decorate(func(context.Context) (int, error) { ran++; return 1, nil })
	for range n {
		if _, err := call(context.Background()); err != nil {
			require.ErrorIs(t, err, chaos.ErrInjected)
			injected++
		}
	}
	return injected, ran
}

// SPEC CH-3: at rate 0.1 over 10,000 calls, the number injected is within the 99.9%
// two-sided binomial bounds (1000 ± 3.29·√900), for every seed tried; the snapshot counts
// them, and the others reach the function.
func TestCH3_InjectedWithinBinomialBounds(t *testing.T) {
	const n, rate = 10_000, 0.1
	lo, hi := binomialBounds(n, rate, 3.29)
	require.Equal(t, [2]int{902, 1098}, [2]int{lo, hi})
	for seed := uint64(1); seed <= 20; seed++ {
		c, _, _ := newChaos(t, chaos.Enabled(true), chaos.Rate(rate), chaos.Seed(seed))
		injected, ran := injectedOf(t, c, n)
		assert.GreaterOrEqual(t, injected, lo, "seed %d", seed)
		assert.LessOrEqual(t, injected, hi, "seed %d", seed)
		assert.Equal(t, n, injected+ran, "seed %d", seed)
		assert.Equal(t, uint64(injected), c.Snapshot().Errors, "seed %d", seed)
	}
	// Without a seed, math/rand/v2's source: within 5 standard deviations, which an
	// unbiased draw leaves about once in 1.7 million runs.
	c, _, _ := newChaos(t, chaos.Enabled(true), chaos.Rate(rate))
	injected, _ := injectedOf(t, c, n)
	lo, hi = binomialBounds(n, rate, 5)
	assert.GreaterOrEqual(t, injected, lo)
	assert.LessOrEqual(t, injected, hi)
}

// SPEC CH-4: nothing is injected while disabled, the default, whatever the rate; nor at
// rate 0; every call is injected into at rate 1.
func TestCH4_DisabledInjectsNothing(t *testing.T) {
	for name, opts := range map[string][]chaos.Option{
		"default":      {chaos.Rate(1)},
		"disabled":     {chaos.Enabled(false), chaos.Rate(1), chaos.Latency(time.Second)},
		"enabled at 0": {chaos.Enabled(true), chaos.Rate(0)},
	} {
		t.Run(name, func(t *testing.T) {
			c, clk, ev := newChaos(t, opts...)
			injected, ran := injectedOf(t, c, 10_000)
			assert.Zero(t, injected)
			assert.Equal(t, 10_000, ran)
			assert.Empty(t, ev.list, "no event")
			assert.Zero(t, clk.Now(), "no latency")
			assert.Equal(t, chaos.Snapshot{Enabled: c.Config().Enabled, Rate: c.Config().Rate,
				Latency: c.Config().Latency}, c.Snapshot())
		})
	}
	c, _, _ := newChaos(t, chaos.Enabled(true), chaos.Rate(1))
	injected, ran := injectedOf(t, c, 1000)
	assert.Equal(t, 1000, injected)
	assert.Zero(t, ran)
}

// SPEC CH-5: a seed makes the draws reproducible: two policies of one seed inject into the
// same calls; another seed into others.
func TestCH5_SeedIsReproducible(t *testing.T) {
	pattern := func(seed uint64) []bool {
		c, _, _ := newChaos(t, chaos.Enabled(true), chaos.Rate(0.3), chaos.Seed(seed))
		call := chaos.NewPolicy[int](c).Decorate(func(context.Context) (int, error) { return 1, nil })
		out := make([]bool, 200)
		for i := range out {
			_, err := call(context.Background())
			out[i] = err != nil
		}
		return out
	}
	assert.Equal(t, pattern(42), pattern(42))
	assert.NotEqual(t, pattern(42), pattern(43))
}

// SPEC CH-6: an injected call takes its latency, runs the behaviour, then ends with the
// error or the result, in that order, without calling the function; one event per
// injection, counted by kind.
func TestCH6_InjectionOrder(t *testing.T) {
	var order []string
	var clockAtBehavior time.Duration
	clk := clock.NewManual()
	c, _, ev := newChaos(t, chaos.Enabled(true), chaos.Rate(1), chaos.Latency(300*time.Millisecond),
		chaos.Behavior(func(context.Context) error {
			order = append(order, "behavior")
			clockAtBehavior = clk.Now()
			return nil
		}), chaos.Error(errUnavailable), chaos.WithClock(clk))
	call := chaos.NewPolicy[string](c).Decorate(func(context.Context) (string, error) {
		order = append(order, "function")
		return "stock", nil
	})
	_, err := call(context.Background())
	assert.Same(t, errUnavailable, err, "the error as is")
	assert.Equal(t, []string{"behavior"}, order, "the function is not called")
	assert.Equal(t, 300*time.Millisecond, clockAtBehavior, "after the latency")
	assert.Equal(t, 300*time.Millisecond, clk.Now())
	assert.Equal(t, []string{"latency", "behavior", "error"}, ev.kinds())
	assert.Equal(t, 300*time.Millisecond, ev.list[0].Wait, "the latency's event gives it")
	assert.Zero(t, ev.list[0].At, "published as the wait begins")
	assert.Same(t, errUnavailable, ev.list[2].Err)
	s := c.Snapshot()
	assert.Equal(t, [4]uint64{1, 0, 1, 1}, [4]uint64{s.Errors, s.Results, s.Latencies, s.Behaviors})
}

// SPEC CH-6: a result replaces the call; a behaviour's error fails it; a behaviour
// returning nil, or a latency alone, lets the function run.
func TestCH6_ResultBehaviorLatency(t *testing.T) {
	ran := 0
	fn := func(context.Context) (string, error) { ran++; return "real", nil }

	c, _, ev := newChaos(t, chaos.Enabled(true), chaos.Rate(1),
		chaos.Result(func(context.Context) (string, error) { return "stale", nil }))
	got, err := chaos.NewPolicy[string](c).Decorate(fn)(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "stale", got)
	assert.Equal(t, []string{"result"}, ev.kinds())
	assert.Equal(t, uint64(1), c.Snapshot().Results)

	errFlaky := errors.New("flaky")
	c, _, ev = newChaos(t, chaos.Enabled(true), chaos.Rate(1),
		chaos.Behavior(func(context.Context) error { return errFlaky }))
	_, err = chaos.NewPolicy[string](c).Decorate(fn)(context.Background())
	assert.Same(t, errFlaky, err)
	assert.Equal(t, []string{"behavior"}, ev.kinds())

	c, _, _ = newChaos(t, chaos.Enabled(true), chaos.Rate(1),
		chaos.Behavior(func(context.Context) error { return nil }))
	got, err = chaos.NewPolicy[string](c).Decorate(fn)(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "real", got)

	c, clk, ev := newChaos(t, chaos.Enabled(true), chaos.Rate(1), chaos.Latency(2*time.Second))
	got, err = chaos.NewPolicy[string](c).Decorate(func(context.Context) (string, error) {
		assert.Equal(t, 2*time.Second, clk.Now(), "the function runs after the latency")
		return "slow", nil
	})(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "slow", got)
	assert.Equal(t, []string{"latency"}, ev.kinds(), "a latency alone injects no error")
	assert.Equal(t, 1, ran, "only the behaviour returning nil let fn run")
}

// SPEC CH-7: the context ending during an injected latency ends the call with its error;
// the function does not run.
func TestCH7_CancelDuringLatencySync(t *testing.T) {
	c, clk, ev := newChaos(t, chaos.Enabled(true), chaos.Rate(1), chaos.Latency(time.Second),
		chaos.Error(errUnavailable))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk.AfterFunc(250*time.Millisecond, cancel)
	ran := false
	_, err := chaos.NewPolicy[int](c).Decorate(func(context.Context) (int, error) { ran = true; return 1, nil })(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	assert.False(t, ran)
	assert.Equal(t, []string{"latency"}, ev.kinds(), "no error injected after the wait ended")
	assert.Zero(t, c.Snapshot().Errors)
}

// SPEC CH-7: a call that returns a future waits out its latency on a clock timer, then
// goes on; cancelling its future, or its context ending, during the wait ends it and the
// function never runs.
func TestCH7_LatencyAsync(t *testing.T) {
	c, clk, ev := newChaos(t, chaos.Enabled(true), chaos.Rate(1), chaos.Latency(time.Second))
	runs := 0
	call := chaos.NewPolicy[string](c).DecorateAsync(func(context.Context) *async.Future[string] {
		runs++
		return async.Completed("stock")
	})

	f := call(context.Background())
	_, done, _ := f.Result()
	assert.False(t, done, "waiting")
	assert.Equal(t, 1, clk.PendingTasks(), "one timer, no goroutine")
	clk.Advance(999 * time.Millisecond)
	assert.Zero(t, runs)
	clk.Advance(time.Millisecond)
	got, err := f.Await(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "stock", got)
	assert.Equal(t, 1, runs)

	f = call(context.Background())
	assert.True(t, f.Cancel(), "not started")
	assert.Zero(t, clk.PendingTasks(), "its timer stopped")
	clk.Advance(time.Hour)
	_, err = f.Await(context.Background())
	assert.ErrorIs(t, err, async.ErrCanceled)

	ctx, cancel := context.WithCancel(context.Background())
	f = call(ctx)
	cancel()
	_, err = f.Await(context.Background())
	assert.ErrorIs(t, err, context.Canceled)
	clk.Advance(time.Hour)
	assert.Equal(t, 1, runs, "the function never ran for the ended calls")
	assert.Equal(t, []string{"latency", "latency", "latency"}, ev.kinds())
}

// SPEC CH-6: the injections of a call that returns a future, without latency: the error,
// the result, the behaviour, as for a synchronous call; and a nil future is
// async.ErrNilFuture.
func TestCH6_Async(t *testing.T) {
	bg := context.Background()
	runs := 0
	fn := func(context.Context) *async.Future[int] { runs++; return async.Completed(7) }

	c, _, _ := newChaos(t, chaos.Enabled(true), chaos.Rate(1), chaos.Error(errUnavailable))
	_, err := chaos.NewPolicy[int](c).DecorateAsync(fn)(bg).Await(bg)
	assert.Same(t, errUnavailable, err)

	c, _, _ = newChaos(t, chaos.Enabled(true), chaos.Rate(1),
		chaos.Result(func(context.Context) (int, error) { return 99, nil }))
	got, err := chaos.NewPolicy[int](c).DecorateAsync(fn)(bg).Await(bg)
	require.NoError(t, err)
	assert.Equal(t, 99, got)

	c, clk, _ := newChaos(t, chaos.Enabled(true), chaos.Rate(1), chaos.Latency(time.Second),
		chaos.Result(func(context.Context) (int, error) { return 98, nil }))
	f := chaos.NewPolicy[int](c).DecorateAsync(fn)(bg)
	clk.Advance(time.Second)
	got, err = f.Await(bg)
	require.NoError(t, err)
	assert.Equal(t, 98, got)

	c, _, _ = newChaos(t, chaos.Enabled(true), chaos.Rate(1),
		chaos.Behavior(func(context.Context) error { return nil }))
	got, err = chaos.NewPolicy[int](c).DecorateAsync(fn)(bg).Await(bg)
	require.NoError(t, err)
	assert.Equal(t, 7, got)
	assert.Equal(t, 1, runs, "only the behaviour let the function run")

	for _, enabled := range []bool{false, true} {
		c, _, _ = newChaos(t, chaos.Enabled(enabled), chaos.Rate(1), chaos.Behavior(func(context.Context) error { return nil }))
		_, err = chaos.NewPolicy[int](c).DecorateAsync(func(context.Context) *async.Future[int] { return nil })(bg).Await(bg)
		assert.ErrorIs(t, err, async.ErrNilFuture, "enabled %v", enabled)
	}
}

// SPEC CH-6: an injected call returns what Result's function returns, value and error
// both, whether it is synchronous or returns a future, with or without a latency: a
// result predicate outside sees the same outcome either way.
func TestCH6_ResultValueAndErrorSyncAndAsync(t *testing.T) {
	bg := context.Background()
	for _, latency := range []time.Duration{0, time.Second} {
		c, clk, _ := newChaos(t, chaos.Enabled(true), chaos.Rate(1), chaos.Latency(latency),
			chaos.Result(func(context.Context) (int, error) { return 503, errUnavailable }))
		p := chaos.NewPolicy[int](c)
		got, err := p.Decorate(func(context.Context) (int, error) { return 200, nil })(bg)
		assert.Same(t, errUnavailable, err, "sync, latency %v", latency)
		assert.Equal(t, 503, got, "sync, latency %v", latency)

		f := p.DecorateAsync(func(context.Context) *async.Future[int] { return async.Completed(200) })(bg)
		clk.Advance(latency)
		got, err = f.Await(bg)
		assert.Same(t, errUnavailable, err, "async, latency %v", latency)
		assert.Equal(t, 503, got, "async, latency %v", latency)
	}
}

// SPEC CH-8: a call whose context is nil or done when it arrives fails with its error,
// runs nothing, draws nothing and publishes nothing, enabled or not.
func TestCH8_Arrival(t *testing.T) {
	for _, x := range ctxtest.OverContexts() {
		for _, enabled := range []bool{false, true} {
			c, clk, ev := newChaos(t, chaos.Enabled(enabled), chaos.Rate(1), chaos.Latency(time.Second))
			p := chaos.NewPolicy[int](c)
			runs := 0
			_, err := p.Decorate(func(context.Context) (int, error) { runs++; return 1, nil })(x.Ctx)
			assert.ErrorIs(t, err, x.Want, x.Name)
			_, err = p.DecorateAsync(func(context.Context) *async.Future[int] { runs++; return async.Completed(1) })(x.Ctx).Await(context.Background())
			assert.ErrorIs(t, err, x.Want, x.Name)
			assert.Zero(t, runs)
			assert.Empty(t, ev.list)
			assert.Zero(t, clk.Now())
			assert.Zero(t, c.Snapshot().Latencies)
		}
	}
}

// SPEC CH-9: a Result of another type than the function's fails each call it would end
// with R4C-REG-010, when the policy was not built by a registry (which refuses the wrap).
func TestCH9_ResultOfAnotherType(t *testing.T) {
	c, _, _ := newChaos(t, chaos.Enabled(true), chaos.Rate(1),
		chaos.Result(func(context.Context) (int, error) { return 1, nil }))
	_, err := chaos.NewPolicy[string](c).Decorate(func(context.Context) (string, error) { return "x", nil })(context.Background())
	var ce *policy.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, r4c.BadSpec, ce.Code)
	assert.Contains(t, ce.Reason, "int")
	_, err = chaos.NewPolicy[string](c).DecorateAsync(func(context.Context) *async.Future[string] {
		return async.Completed("x")
	})(context.Background()).Await(context.Background())
	assert.Equal(t, r4c.BadSpec, r4c.CodeOf(err))
}

// SPEC CH-10: Enabled, Rate and Latency change live, for the calls that arrive after the
// change, with a ConfigChanged event naming them; an invalid configuration changes
// nothing; an equal one publishes nothing.
func TestCH10_Reconfigure(t *testing.T) {
	c, clk, ev := newChaos(t, chaos.Rate(1), chaos.Error(errUnavailable))
	call := chaos.NewPolicy[int](c).Decorate(func(context.Context) (int, error) { return 1, nil })
	_, err := call(context.Background())
	require.NoError(t, err, "off")

	cfg := c.Config()
	cfg.Enabled = true
	require.NoError(t, c.CheckReconfigure(cfg))
	require.NoError(t, c.Reconfigure(cfg))
	_, err = call(context.Background())
	assert.Same(t, errUnavailable, err, "on")
	require.Len(t, ev.list, 2)
	assert.Equal(t, policy.ConfigChanged, ev.list[0].Kind)
	assert.Equal(t, []string{"enabled"}, ev.list[0].Changed)

	cfg.Rate, cfg.Latency = 0.5, time.Second
	require.NoError(t, c.Reconfigure(cfg))
	assert.Equal(t, []string{"latency", "rate"}, ev.list[len(ev.list)-1].Changed)
	assert.Equal(t, 0.5, c.Snapshot().Rate)
	assert.Equal(t, time.Second, c.Snapshot().Latency)

	n := len(ev.list)
	require.NoError(t, c.Reconfigure(cfg))
	assert.Len(t, ev.list, n, "equal: nothing published")

	bad := cfg
	bad.Rate = 2
	assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(c.CheckReconfigure(bad)))
	assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(c.Reconfigure(bad)))
	assert.Equal(t, cfg, c.Config(), "unchanged")

	cfg.Enabled = false
	require.NoError(t, c.Reconfigure(cfg))
	before := clk.Now()
	for range 100 {
		_, err = call(context.Background())
		require.NoError(t, err, "off again")
	}
	assert.Equal(t, before, clk.Now())
}
