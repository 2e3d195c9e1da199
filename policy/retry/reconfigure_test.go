package retry_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/retry"
)

// SPEC RC-1: a Reconfigure made while a call runs (here from inside its first attempt)
// leaves that call its configuration: its attempts and its waits; the next call has the
// new one.
func TestRC1_ReconfigureAppliesFromTheNextCall(t *testing.T) {
	clk := clock.NewManual()
	r := newRetry(t, retry.WithClock(clk), retry.MaxAttempts(3), retry.Delay(100*time.Millisecond))
	next := r.Config()
	next.MaxAttempts, next.Delay, next.Multiplier = 5, time.Second, 2

	var times []time.Duration
	call := retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) {
		times = append(times, clk.Now())
		if len(times) == 1 {
			require.NoError(t, r.Reconfigure(next))
		}
		return 0, errBoom
	})
	_, err := call(context.Background(), struct{}{})
	require.ErrorIs(t, err, errBoom)
	assert.Equal(t, []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond}, times,
		"the call in progress keeps 3 attempts, 100ms apart")
	assert.Equal(t, next, r.Config())

	times = nil
	start := clk.Now()
	_, err = call(context.Background(), struct{}{})
	require.ErrorIs(t, err, errBoom)
	require.Len(t, times, 5, "the next call has 5 attempts")
	for i, want := range []time.Duration{0, time.Second, 3 * time.Second, 7 * time.Second, 15 * time.Second} {
		assert.Equal(t, want, times[i]-start, "attempt %d", i+1)
	}
}

// SPEC RC-1, asynchronously: the call keeps its configuration across its timers.
func TestRC1_AsyncReconfigureAppliesFromTheNextCall(t *testing.T) {
	clk := clock.NewManual()
	r := newRetry(t, retry.WithClock(clk), retry.MaxAttempts(2), retry.Delay(100*time.Millisecond))
	fn := &asyncFn{clk: clk}
	call := retry.DecorateAsyncFunc(r, fn.call)

	f := call(context.Background(), struct{}{})
	next := r.Config()
	next.MaxAttempts, next.Delay = 4, time.Second
	require.NoError(t, r.Reconfigure(next))
	fn.last().complete(0, errBoom)
	clk.Advance(100 * time.Millisecond)
	require.Equal(t, 2, fn.n(), "the old delay")
	fn.last().complete(0, errBoom)
	_, err := settled(t, f)
	require.ErrorIs(t, err, errBoom, "the old maxAttempts: 2")

	start := clk.Now()
	f = call(context.Background(), struct{}{})
	for i := 1; i < 4; i++ {
		fn.last().complete(0, errBoom)
		clk.Advance(time.Second)
		require.Equal(t, 2+i+1, fn.n())
		assert.Equal(t, time.Duration(i)*time.Second, fn.last().at-start)
	}
	fn.last().complete(0, errBoom)
	_, err = settled(t, f)
	require.ErrorIs(t, err, errBoom)
	assert.Equal(t, 6, fn.n(), "the new maxAttempts: 4")
}

// SPEC RC-1: enabled and waitForPermit change live too, sync and async.
func TestRC1_EnabledAndWaitForPermitChangeLive(t *testing.T) {
	for _, isAsync := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", isAsync), func(t *testing.T) {
			clk := clock.NewManual()
			rec := &contracttest.Recorder{}
			r := newRetry(t, retry.WithClock(clk), retry.MaxAttempts(2), retry.Delay(100*time.Millisecond), retry.OnEvent(rec.Listen))
			rej := &throttled{id: "api", next: time.Second, ok: true}
			calls := 0
			do := func() (time.Duration, error) {
				start := clk.Now()
				var err error
				if isAsync {
					f := retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] {
						calls++
						return async.Failed[int](rej)
					})(context.Background(), struct{}{})
					clk.Advance(time.Hour)
					_, err = settled(t, f)
				} else {
					_, err = retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) { calls++; return 0, rej })(context.Background(), struct{}{})
				}
				return clk.Now() - start, err
			}
			c := r.Config()

			c.Disabled = true
			require.NoError(t, r.Reconfigure(c))
			_, err := do()
			require.Same(t, rej, err)
			assert.Equal(t, 1, calls, "disabled: a single attempt")
			assert.Zero(t, rec.Count(retry.EventAttempt), "and no retry event")

			c.Disabled, c.WaitForPermit = false, true
			require.NoError(t, r.Reconfigure(c))
			calls = 0
			_, err = do()
			require.Same(t, rej, err)
			assert.Equal(t, 2, calls, "enabled again")
			waits := rec.Of(retry.EventAttempt)
			require.Len(t, waits, 1)
			assert.Equal(t, time.Second, waits[0].Wait, "waitForPermit on: the wait is the next permit's")

			c.WaitForPermit = false
			require.NoError(t, r.Reconfigure(c))
			_, err = do()
			require.Same(t, rej, err)
			waits = rec.Of(retry.EventAttempt)
			require.Len(t, waits, 2)
			assert.Equal(t, 100*time.Millisecond, waits[1].Wait, "waitForPermit off: the delay")
		})
	}
}

// SPEC RC-1: calls running while the configuration changes each see one configuration,
// whole: their attempts and their waits are all the old one's or all the new one's.
func TestRC1_ConcurrentReconfigureIsNeverTorn(t *testing.T) {
	clk := clock.NewManual()
	rec := &contracttest.Recorder{}
	r := newRetry(t, retry.WithClock(clk), retry.MaxAttempts(2), retry.Delay(time.Millisecond), retry.OnEvent(rec.Listen))
	a, b := r.Config(), r.Config()
	b.MaxAttempts, b.Delay = 4, 3*time.Millisecond

	const callers, most = 4, 100000
	done := make(chan struct{})
	var flipper sync.WaitGroup
	flipper.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			c := a
			if i%2 == 0 {
				c = b
			}
			assert.NoError(t, r.Reconfigure(c))
			runtime.Gosched()
		}
	})
	var wg sync.WaitGroup
	errs := make([][]error, callers)
	attempts := make([][]int, callers)
	for g := range callers {
		wg.Go(func() {
			kinds := map[int]bool{}
			// Until this caller has seen both configurations, 20 calls at least.
			for i := 0; i < most && (i < 20 || len(kinds) < 2); i++ {
				err := fmt.Errorf("caller %d call %d", g, i) // names the call in its events
				n := 0
				_, got := retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) {
					n++
					runtime.Gosched() // let the configuration change during the call
					return 0, err
				})(context.Background(), struct{}{})
				assert.Same(t, err, got)
				errs[g] = append(errs[g], err)
				attempts[g] = append(attempts[g], n)
				kinds[n] = true
			}
		})
	}
	wg.Wait()
	close(done)
	flipper.Wait()

	waits := map[error][]time.Duration{}
	for _, e := range rec.Of(retry.EventAttempt) {
		waits[e.Err] = append(waits[e.Err], e.Wait)
	}
	seen := map[int]int{}
	for g := range callers {
		for i, err := range errs[g] {
			n := attempts[g][i]
			seen[n]++
			switch n {
			case 2:
				assert.Equal(t, []time.Duration{time.Millisecond}, waits[err])
			case 4:
				assert.Equal(t, []time.Duration{3 * time.Millisecond, 3 * time.Millisecond, 3 * time.Millisecond}, waits[err])
			default:
				t.Errorf("call %v made %d attempts", err, n)
			}
		}
	}
	t.Logf("calls by attempts: %v", seen)
	assert.Positive(t, seen[2], "calls ran with each configuration")
	assert.Positive(t, seen[4], "calls ran with each configuration")
}

// SPEC RC-2: an invalid configuration, or one that changes a setting made in code only
// (RetryOn, AbortOn), is refused by Reconfigure and CheckReconfigure with its code,
// and changes nothing: the configuration, the calls and the events stay as they were.
func TestRC2_InvalidReconfigureChangesNothing(t *testing.T) {
	clk := clock.NewManual()
	rec := &contracttest.Recorder{}
	src := rand.NewPCG(1, 2)
	errFatal := errors.New("fatal")
	r := newRetry(t, retry.WithClock(clk), retry.MaxAttempts(2), retry.Delay(100*time.Millisecond),
		retry.AbortOn(errFatal), retry.RandSource(src), retry.OnEvent(rec.Listen))
	before := r.Config()
	for _, tc := range []struct {
		name string
		edit func(*retry.Config)
		code string
		key  string
	}{
		{"maxAttempts 0", func(c *retry.Config) { c.MaxAttempts = 0 }, r4c.OutOfRange, "retry.maxAttempts"},
		{"negative delay", func(c *retry.Config) { c.Delay = -time.Second }, r4c.NegativeDuration, "retry.delay"},
		{"multiplier below 1", func(c *retry.Config) { c.MaxAttempts = 9; c.Multiplier = 0.5 }, r4c.OutOfRange, "retry.multiplier"},
		{"negative maxDelay", func(c *retry.Config) { c.MaxDelay = -1 }, r4c.NegativeDuration, "retry.maxDelay"},
		{"jitter above 1", func(c *retry.Config) { c.Jitter = 2 }, r4c.OutOfRange, "retry.jitter"},
		{"retryOn added", func(c *retry.Config) { c.RetryOn = []error{errBoom} }, r4c.NotLive, "retry.retryOn"},
		{"abortOn dropped", func(c *retry.Config) { c.MaxAttempts = 5; c.AbortOn = nil }, r4c.NotLive, "retry.abortOn"},
		{"abortOn, same text, another error", func(c *retry.Config) { c.AbortOn = []error{errors.New("fatal")} }, r4c.NotLive, "retry.abortOn"},
		{"from DefaultConfig", func(c *retry.Config) { *c = retry.DefaultConfig() }, r4c.NotLive, "retry.abortOn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := r.Config()
			tc.edit(&c)
			for _, err := range []error{r.CheckReconfigure(c), r.Reconfigure(c)} {
				var ce *policy.ConfigError
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, tc.code, ce.Code)
				assert.Equal(t, tc.key, ce.Key)
			}
			assert.Equal(t, before, r.Config(), "nothing changed")
		})
	}
	assert.Empty(t, rec.Events(), "no event")

	times := []time.Duration{}
	_, err := retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) {
		times = append(times, clk.Now())
		return 0, errBoom
	})(context.Background(), struct{}{})
	require.ErrorIs(t, err, errBoom)
	assert.Equal(t, []time.Duration{0, 100 * time.Millisecond}, times, "calls keep the configuration")

	// A check that passes changes nothing either; the same lists and source, as Config
	// returns them, are accepted.
	c := r.Config()
	c.MaxAttempts = 7
	require.NoError(t, r.CheckReconfigure(c))
	assert.Equal(t, before, r.Config())
	require.NoError(t, r.Reconfigure(c))
	assert.Equal(t, 7, r.Config().MaxAttempts)
	assert.Equal(t, before.AbortOn, r.Config().AbortOn)
}

// SPEC RC-3: one ConfigChanged per change, naming the changed attributes sorted; none for
// a configuration equal to the one in force.
func TestRC3_ConfigChangedListsTheChangedAttributes(t *testing.T) {
	clk := clock.NewManual()
	rec := &contracttest.Recorder{}
	r := newRetry(t, retry.WithClock(clk), retry.Name("orders"), retry.OnEvent(rec.Listen))
	clk.Advance(5 * time.Second)

	require.NoError(t, r.Reconfigure(r.Config()))
	assert.Empty(t, rec.Events(), "no change, no event")

	c := r.Config()
	c.MaxAttempts, c.Delay = 6, time.Second
	require.NoError(t, r.Reconfigure(c))
	require.NoError(t, r.Reconfigure(c))
	c = retry.Config{MaxAttempts: 2, Delay: 2 * time.Second, Multiplier: 1.5, MaxDelay: time.Minute, Jitter: 0.1,
		WaitForPermit: true, Disabled: true}
	require.NoError(t, r.Reconfigure(c))

	got := rec.Events()
	require.Len(t, got, 2)
	for _, e := range got {
		assert.Equal(t, policy.ConfigChanged, e.Kind)
		assert.Equal(t, "orders", e.Instance)
		assert.Equal(t, 5*time.Second, e.At)
	}
	assert.Equal(t, []string{"delay", "maxAttempts"}, got[0].Changed)
	assert.Equal(t, []string{"delay", "enabled", "jitter", "maxAttempts", "maxDelay", "multiplier", "waitForPermit"}, got[1].Changed)
	assert.Equal(t, c, r.Config())
	assert.Contains(t, got[0].String(), "changed=delay,maxAttempts")
}
