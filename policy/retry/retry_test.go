package retry_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/retry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	errBoom  = errors.New("boom")
	errOther = errors.New("other")
)

// openError stands for a circuit breaker's open-state rejection (SPEC CO-4).
type openError struct{ never bool }

func (e openError) Error() string      { return "breaker open" }
func (e openError) NeverRetried() bool { return e.never }

// recorder is a function that fails with errs[i] on its i-th call (nil: success, and the
// last entry repeats) and records the clock time of each call.
type recorder struct {
	clk   clock.Clock
	errs  []error
	mu    sync.Mutex
	times []time.Duration
}

func (r *recorder) call(ctx context.Context, _ struct{}) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.times)
	r.times = append(r.times, r.clk.Now())
	err := r.errs[min(n, len(r.errs)-1)]
	if err != nil {
		return -(n + 1), err
	}
	return n + 1, nil
}

func (r *recorder) calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.times)
}

type events struct {
	mu  sync.Mutex
	all []policy.Event
}

func (e *events) listen(ev policy.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

func (e *events) get() []policy.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]policy.Event(nil), e.all...)
}

func newRetry(t *testing.T, opts ...retry.Option) *retry.Retry {
	t.Helper()
	r, err := retry.New(opts...)
	require.NoError(t, err)
	return r
}

func TestDefaults(t *testing.T) {
	assert.Equal(t, retry.Config{MaxAttempts: 3, Delay: 500 * time.Millisecond, Multiplier: 1},
		retry.DefaultConfig())
	assert.False(t, retry.DefaultConfig().Disabled, "the defaults are enabled")
	r := newRetry(t)
	assert.Equal(t, "", r.InstanceID())
	assert.Equal(t, retry.DefaultConfig(), r.Config())
	assert.Equal(t, "shared", newRetry(t, retry.Name("shared")).InstanceID())
	assert.Equal(t, "id", newRetry(t, retry.Name("shared"), retry.Name("id")).InstanceID())
}

func TestDefaultDelayIsConstant(t *testing.T) {
	clk := clock.NewManual()
	rec := &recorder{clk: clk, errs: []error{errBoom}}
	call := retry.DecorateFunc(newRetry(t, retry.WithClock(clk)), rec.call)

	v, err := call(context.Background(), struct{}{})
	require.Same(t, errBoom, err, "exhausted: the last error is returned as is")
	assert.Equal(t, -3, v, "and the last attempt's value with it")
	assert.Equal(t, []time.Duration{0, 500 * time.Millisecond, time.Second}, rec.times)
}

func TestBackoffIsExact(t *testing.T) {
	clk := clock.NewManual()
	rec := &recorder{clk: clk, errs: []error{errBoom}}
	r := newRetry(t, retry.WithClock(clk), retry.MaxAttempts(6), retry.Delay(time.Second),
		retry.Multiplier(2), retry.MaxDelay(3*time.Second))
	_, err := retry.DecorateFunc(r, rec.call)(context.Background(), struct{}{})
	require.ErrorIs(t, err, errBoom)
	// Waits 1s, 2s, then capped at 3s.
	assert.Equal(t, []time.Duration{0, time.Second, 3 * time.Second, 6 * time.Second, 9 * time.Second, 12 * time.Second},
		rec.times)
}

func TestBackoff(t *testing.T) {
	c := retry.Config{Delay: 100 * time.Millisecond, Multiplier: 1.5}
	assert.Equal(t, 100*time.Millisecond, c.Backoff(1))
	assert.Equal(t, 150*time.Millisecond, c.Backoff(2))
	assert.Equal(t, 225*time.Millisecond, c.Backoff(3))
	c.Multiplier = 10
	assert.Equal(t, time.Duration(1<<63-1), c.Backoff(100), "saturates instead of overflowing")
	c.MaxDelay = time.Minute
	assert.Equal(t, time.Minute, c.Backoff(100))
	c.MaxDelay = 50 * time.Millisecond
	assert.Equal(t, 50*time.Millisecond, c.Backoff(1), "a cap below the delay caps the first wait")
}

func TestSuccessAfterRetries(t *testing.T) {
	clk := clock.NewManual()
	ev := &events{}
	rec := &recorder{clk: clk, errs: []error{errBoom, errBoom, nil}}
	r := newRetry(t, retry.WithClock(clk), retry.MaxAttempts(5), retry.OnEvent(ev.listen))
	v, err := retry.DecorateFunc(r, rec.call)(context.Background(), struct{}{})
	require.NoError(t, err)
	assert.Equal(t, 3, v)
	assert.Equal(t, 3, rec.calls())
	got := ev.get()
	require.Len(t, got, 2, "a success publishes no RetryExhausted")
	for i, e := range got {
		assert.Equal(t, retry.EventAttempt, e.Kind)
		assert.Equal(t, i+1, e.Attempt)
	}
}

func TestJitterBoundsAreDeterministicWithASeed(t *testing.T) {
	run := func() []time.Duration {
		clk := clock.NewManual()
		rec := &recorder{clk: clk, errs: []error{errBoom}}
		r := newRetry(t, retry.WithClock(clk), retry.MaxAttempts(200), retry.Delay(time.Second),
			retry.Multiplier(2), retry.MaxDelay(time.Second), retry.Jitter(0.5),
			retry.RandSource(rand.NewPCG(1, 2)))
		_, err := retry.DecorateFunc(r, rec.call)(context.Background(), struct{}{})
		require.ErrorIs(t, err, errBoom)
		gaps := make([]time.Duration, 0, len(rec.times)-1)
		for i := 1; i < len(rec.times); i++ {
			gaps = append(gaps, rec.times[i]-rec.times[i-1])
		}
		return gaps
	}
	gaps := run()
	require.Len(t, gaps, 199)
	lo, hi := gaps[0], gaps[0]
	for _, g := range gaps {
		// Capped at 1s, then jittered: uniform in [500ms, 1.5s).
		require.GreaterOrEqual(t, g, 500*time.Millisecond)
		require.Less(t, g, 1500*time.Millisecond)
		lo, hi = min(lo, g), max(hi, g)
	}
	assert.Less(t, lo, 600*time.Millisecond, "the draws cover the range")
	assert.Greater(t, hi, 1400*time.Millisecond, "the draws cover the range")
	assert.Equal(t, gaps, run(), "the same seed gives the same waits")
}

func TestJitterOnTheGlobalSource(t *testing.T) {
	clk := clock.NewManual()
	rec := &recorder{clk: clk, errs: []error{errBoom}}
	r := newRetry(t, retry.WithClock(clk), retry.MaxAttempts(50), retry.Delay(time.Second), retry.Jitter(1))
	_, err := retry.DecorateFunc(r, rec.call)(context.Background(), struct{}{})
	require.ErrorIs(t, err, errBoom)
	for i := 1; i < len(rec.times); i++ {
		g := rec.times[i] - rec.times[i-1]
		require.GreaterOrEqual(t, g, time.Duration(0))
		require.Less(t, g, 2*time.Second)
	}
}

func TestRetryOn(t *testing.T) {
	clk := clock.NewManual()
	r := newRetry(t, retry.WithClock(clk), retry.On(errBoom, nil))

	rec := &recorder{clk: clk, errs: []error{fmt.Errorf("wrapped: %w", errBoom), nil}}
	_, err := retry.DecorateFunc(r, rec.call)(context.Background(), struct{}{})
	require.NoError(t, err)
	assert.Equal(t, 2, rec.calls(), "a wrapped match is retried (errors.Is)")

	rec = &recorder{clk: clk, errs: []error{errOther, nil}}
	before := clk.Now()
	_, err = retry.DecorateFunc(r, rec.call)(context.Background(), struct{}{})
	require.Same(t, errOther, err)
	assert.Equal(t, 1, rec.calls(), "an error outside RetryOn returns at once")
	assert.Equal(t, before, clk.Now(), "without waiting")
}

func TestAbortOnWinsOverRetryOn(t *testing.T) {
	clk := clock.NewManual()
	r := newRetry(t, retry.WithClock(clk), retry.On(errBoom), retry.AbortOn(errBoom))
	rec := &recorder{clk: clk, errs: []error{errBoom, nil}}
	_, err := retry.DecorateFunc(r, rec.call)(context.Background(), struct{}{})
	require.Same(t, errBoom, err)
	assert.Equal(t, 1, rec.calls())
	assert.Equal(t, time.Duration(0), clk.Now())

	r = newRetry(t, retry.WithClock(clk), retry.AbortOn(errBoom))
	rec = &recorder{clk: clk, errs: []error{errOther, nil}}
	_, err = retry.DecorateFunc(r, rec.call)(context.Background(), struct{}{})
	require.NoError(t, err, "errors outside AbortOn are still retried")
	assert.Equal(t, 2, rec.calls())
}

// SPEC CO-4: an open breaker's rejection is never retried, whatever the lists say.
func TestNeverRetriedIsNeverRetried_CO4(t *testing.T) {
	clk := clock.NewManual()
	ev := &events{}
	open := openError{never: true}
	r := newRetry(t, retry.WithClock(clk), retry.On(open), retry.OnEvent(ev.listen))
	rec := &recorder{clk: clk, errs: []error{fmt.Errorf("call: %w", open), nil}}
	_, err := retry.DecorateFunc(r, rec.call)(context.Background(), struct{}{})
	require.ErrorIs(t, err, open)
	assert.Equal(t, 1, rec.calls())
	assert.Equal(t, time.Duration(0), clk.Now(), "no delay passes")
	assert.Equal(t, 0, clk.PendingTasks())
	assert.False(t, r.Retryable(open))
	got := ev.get()
	require.Len(t, got, 1)
	assert.Equal(t, retry.EventAborted, got[0].Kind, "stopped before its attempts were spent")
	assert.Equal(t, 1, got[0].Attempt)
	assert.ErrorIs(t, got[0].Err, open)

	// An error that says false is an ordinary error.
	rec = &recorder{clk: clk, errs: []error{openError{never: false}, nil}}
	_, err = retry.DecorateFunc(newRetry(t, retry.WithClock(clk)), rec.call)(context.Background(), struct{}{})
	require.NoError(t, err)
	assert.Equal(t, 2, rec.calls())
}

func TestContextCanceledDuringTheDelayStopsRetries(t *testing.T) {
	clk := clock.NewManual()
	ev := &events{}
	r := newRetry(t, retry.WithClock(clk), retry.Delay(time.Second), retry.MaxAttempts(5), retry.OnEvent(ev.listen))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk.AfterFunc(500*time.Millisecond, cancel) // ends during the first wait
	rec := &recorder{clk: clk, errs: []error{errBoom}}
	_, err := retry.DecorateFunc(r, rec.call)(ctx, struct{}{})
	require.ErrorIs(t, err, errBoom)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, rec.calls())
	got := ev.get()
	require.Len(t, got, 2)
	assert.Equal(t, retry.EventAttempt, got[0].Kind)
	assert.Equal(t, retry.EventAborted, got[1].Kind, "the context ended before the attempts were spent")
	assert.Equal(t, 1, got[1].Attempt)
	assert.Equal(t, err, got[1].Err)
	assert.ErrorIs(t, got[1].Err, context.Canceled)
}

// racyClock's Sleep reports a completed wait even though the context ended during it, as
// a real timer firing together with the context's deadline may.
type racyClock struct {
	*clock.Manual
	onSleep func()
}

func (c racyClock) Sleep(_ context.Context, d time.Duration) error {
	c.Advance(d)
	c.onSleep()
	return nil
}

func TestContextIsCheckedBeforeEachNewAttempt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := racyClock{Manual: clock.NewManual(), onSleep: cancel}
	r := newRetry(t, retry.WithClock(clk))
	rec := &recorder{clk: clk, errs: []error{errBoom}}
	_, err := retry.DecorateFunc(r, rec.call)(ctx, struct{}{})
	require.ErrorIs(t, err, errBoom)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, rec.calls())
}

func TestContextEndedByTheAttemptStopsRetries(t *testing.T) {
	clk := clock.NewManual()
	r := newRetry(t, retry.WithClock(clk))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	_, err := retry.DecorateFunc(r, func(ctx context.Context, _ struct{}) (int, error) {
		calls++
		cancel()
		return 0, errBoom
	})(ctx, struct{}{})
	require.ErrorIs(t, err, errBoom)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, calls)
	assert.Equal(t, time.Duration(0), clk.Now(), "no wait starts once the context has ended")

	// The attempt returning the context's own error: it is returned as is.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	calls = 0
	_, err = retry.DecorateFunc(r, func(ctx context.Context, _ struct{}) (int, error) {
		calls++
		cancel()
		return 0, ctx.Err()
	})(ctx, struct{}{})
	require.Same(t, context.Canceled, err)
	assert.Equal(t, 1, calls)
}

// On the system clock, a wait that would end after the deadline is not slept: the call
// returns the attempt's error as is, long before its deadline (CO-10).
func TestCO10_DeadlineStopsRetriesOnTheSystemClock(t *testing.T) {
	r := newRetry(t, retry.Delay(time.Hour))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) { return 0, errBoom })(ctx, struct{}{})
	require.Equal(t, errBoom, err)
	assert.NoError(t, ctx.Err(), "returned before the deadline, without waiting for it")
}

func TestEventSequence(t *testing.T) {
	clk := clock.NewManual()
	ev := &events{}
	r := newRetry(t, retry.WithClock(clk), retry.Name("SearchAPI.Search"),
		retry.Delay(time.Second), retry.Multiplier(3), retry.OnEvent(ev.listen))
	rec := &recorder{clk: clk, errs: []error{errBoom}}
	_, err := retry.DecorateFunc(r, rec.call)(context.Background(), struct{}{})
	require.Error(t, err)
	want := []policy.Event{
		{Kind: retry.EventAttempt, Instance: "SearchAPI.Search", At: 0, Wait: time.Second, Err: errBoom, Attempt: 1},
		{Kind: retry.EventAttempt, Instance: "SearchAPI.Search", At: time.Second, Wait: 3 * time.Second, Err: errBoom, Attempt: 2},
		{Kind: retry.EventExhausted, Instance: "SearchAPI.Search", At: 4 * time.Second, Err: errBoom, Attempt: 3},
	}
	assert.Equal(t, want, ev.get())
}

func TestFirstAttemptSuccessPublishesNothing(t *testing.T) {
	clk := clock.NewManual()
	ev := &events{}
	r := newRetry(t, retry.WithClock(clk), retry.OnEvent(ev.listen))
	v, err := retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) { return 7, nil })(context.Background(), struct{}{})
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	assert.Empty(t, ev.get())
}

func TestMaxAttemptsOne(t *testing.T) {
	clk := clock.NewManual()
	ev := &events{}
	r := newRetry(t, retry.WithClock(clk), retry.MaxAttempts(1), retry.OnEvent(ev.listen))
	rec := &recorder{clk: clk, errs: []error{errBoom, nil}}
	_, err := retry.DecorateFunc(r, rec.call)(context.Background(), struct{}{})
	require.Same(t, errBoom, err)
	assert.Equal(t, 1, rec.calls())
	require.Len(t, ev.get(), 1)
	assert.Equal(t, retry.EventExhausted, ev.get()[0].Kind)
}

func TestDisabled(t *testing.T) {
	clk := clock.NewManual()
	ev := &events{}
	r := newRetry(t, retry.WithClock(clk), retry.Enabled(false), retry.OnEvent(ev.listen))
	rec := &recorder{clk: clk, errs: []error{errBoom, nil}}
	_, err := retry.DecorateFunc(r, rec.call)(context.Background(), struct{}{})
	require.Same(t, errBoom, err)
	assert.Equal(t, 1, rec.calls())
	assert.Empty(t, ev.get())

	calls := 0
	f := retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] {
		calls++
		return async.Failed[int](errBoom)
	})(context.Background(), struct{}{})
	_, done, ferr := f.Result()
	require.True(t, done)
	require.Same(t, errBoom, ferr)
	assert.Equal(t, 1, calls)
}

func TestValidation(t *testing.T) {
	cases := []struct {
		name string
		opt  retry.Option
		code string
		key  string
	}{
		{"maxAttempts 0", retry.MaxAttempts(0), r4c.OutOfRange, "retry.maxAttempts"},
		{"maxAttempts -1", retry.MaxAttempts(-1), r4c.OutOfRange, "retry.maxAttempts"},
		{"delay negative", retry.Delay(-time.Millisecond), r4c.NegativeDuration, "retry.delay"},
		{"multiplier below 1", retry.Multiplier(0.5), r4c.OutOfRange, "retry.multiplier"},
		{"multiplier NaN", retry.Multiplier(nan()), r4c.OutOfRange, "retry.multiplier"},
		{"multiplier +Inf", retry.Multiplier(inf()), r4c.OutOfRange, "retry.multiplier"},
		{"maxDelay negative", retry.MaxDelay(-time.Second), r4c.NegativeDuration, "retry.maxDelay"},
		{"jitter negative", retry.Jitter(-0.1), r4c.OutOfRange, "retry.jitter"},
		{"jitter above 1", retry.Jitter(1.1), r4c.OutOfRange, "retry.jitter"},
		{"jitter NaN", retry.Jitter(nan()), r4c.OutOfRange, "retry.jitter"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := retry.New(c.opt)
			require.Nil(t, r)
			var ce *policy.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, c.code, ce.Code)
			assert.Equal(t, c.key, ce.Key)
			assert.Contains(t, err.Error(), c.code)
		})
	}
	for _, ok := range []retry.Option{retry.MaxAttempts(1), retry.Delay(0), retry.Multiplier(1),
		retry.MaxDelay(0), retry.Jitter(0), retry.Jitter(1)} {
		_, err := retry.New(ok)
		require.NoError(t, err)
	}
}

func nan() float64 { z := 0.0; return z / z }
func inf() float64 { z := 0.0; return 1 / z }

func TestSameOptionsGiveEqualConfigs(t *testing.T) {
	src := rand.NewPCG(1, 1)
	opts := []retry.Option{retry.MaxAttempts(4), retry.On(errBoom), retry.AbortOn(errOther), retry.RandSource(src)}
	a, b := newRetry(t, opts...), newRetry(t, opts...)
	assert.True(t, reflect.DeepEqual(a.Config(), b.Config()))
	assert.False(t, reflect.DeepEqual(a.Config(), newRetry(t, retry.MaxAttempts(5)).Config()))
	assert.True(t, reflect.DeepEqual(retry.DefaultConfig(), newRetry(t, retry.On(), retry.AbortOn(nil)).Config()),
		"empty lists are the defaults")
}

func TestNewPolicy(t *testing.T) {
	clk := clock.NewManual()
	r := newRetry(t, retry.WithClock(clk))
	p := retry.NewPolicy[int](r)
	assert.Equal(t, retry.Layer, p.Layer())

	calls := 0
	v, err := p.Decorate(func(context.Context) (int, error) {
		calls++
		if calls < 3 {
			return 0, errBoom
		}
		return 42, nil
	})(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 42, v)

	f := p.DecorateAsync(func(context.Context) *async.Future[int] { return async.Failed[int](errBoom) })(context.Background())
	clk.Advance(500 * time.Millisecond)
	clk.Advance(500 * time.Millisecond)
	_, done, err := f.Result()
	require.True(t, done)
	require.Same(t, errBoom, err)
}

// Many goroutines share one retry and one random source on the system clock (run with -race).
func TestConcurrentUse(t *testing.T) {
	src := rand.NewPCG(3, 4)
	r1 := newRetry(t, retry.Delay(time.Microsecond), retry.Jitter(0.5), retry.MaxAttempts(4), retry.RandSource(src))
	r2 := newRetry(t, retry.Delay(time.Microsecond), retry.Jitter(0.5), retry.MaxAttempts(4), retry.RandSource(src))
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			r := r1
			if i%2 == 1 {
				r = r2
			}
			calls := 0
			call := retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) {
				calls++
				if calls%4 == 0 {
					return calls, nil
				}
				return 0, errBoom
			})
			for range 20 {
				_, err := call(context.Background(), struct{}{})
				assert.NoError(t, err)
			}
			acalls := 0
			acall := retry.DecorateAsyncFunc(r, func(ctx context.Context, _ struct{}) *async.Future[int] {
				acalls++
				n := acalls
				return async.Go(ctx, func(context.Context) (int, error) {
					if n%4 == 0 {
						return n, nil
					}
					return 0, errBoom
				})
			})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			for range 20 {
				_, err := acall(ctx, struct{}{}).Await(ctx)
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
}

func TestAllocations(t *testing.T) {
	clk := clock.NewManual()
	r := newRetry(t, retry.WithClock(clk), retry.AbortOn(errOther),
		retry.OnEvent(func(policy.Event) {}))
	ctx := context.Background()

	ok := retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) { return 1, nil })
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = ok(ctx, struct{}{}) }), "first-attempt success")

	aborted := retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) { return 0, errOther })
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = aborted(ctx, struct{}{}) }), "an error not retried")

	done := async.Completed(1)
	aok := retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] { return done })
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = aok(ctx, struct{}{}) }), "async: completed success")

	retried := retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) { return 0, errBoom })
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = retried(ctx, struct{}{}) }),
		"retries on a manual clock allocate nothing either")
}
