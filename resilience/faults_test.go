package resilience_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// arrivalCase is one composition that a call reaches with a context that is already
// done, or nil.
type arrivalCase struct {
	name  string
	specs func() []resilience.Spec
}

func arrivalCases() []arrivalCase {
	limiter := func() resilience.Spec {
		return resilience.RateLimiter(ratelimit.Permits(2), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Second))
	}
	breaker := func() resilience.Spec { return resilience.CircuitBreaker() }
	bh := func() resilience.Spec {
		return resilience.Bulkhead(bulkhead.MaxConcurrent(2), bulkhead.MaxWait(time.Second))
	}
	rt := func() resilience.Spec { return resilience.Retry(retry.MaxAttempts(3), retry.Delay(time.Millisecond)) }
	to := func() resilience.Spec { return resilience.Timeout(time.Second) }
	fb := func() resilience.Spec {
		return resilience.Fallback(func(context.Context, error) (int, error) { return -1, nil })
	}
	user := func() resilience.Spec { return resilience.Use[int](arrivalPassThrough{}) }
	one := func(s func() resilience.Spec) func() []resilience.Spec {
		return func() []resilience.Spec { return []resilience.Spec{s()} }
	}
	return []arrivalCase{
		{"none", func() []resilience.Spec { return nil }},
		{"rateLimiter", one(limiter)},
		{"circuitBreaker", one(breaker)},
		{"bulkhead", one(bh)},
		{"retry", one(rt)},
		{"timeout", one(to)},
		{"fallback", one(fb)},
		{"user", one(user)},
		{"all", func() []resilience.Spec {
			return []resilience.Spec{fb(), rt(), breaker(), limiter(), to(), bh(), user()}
		}},
	}
}

// arrivalPassThrough is a user's policy that does nothing but call on.
type arrivalPassThrough struct{}

func (arrivalPassThrough) Layer() policy.Layer { return "passThrough" }
func (arrivalPassThrough) Decorate(next policy.Call[int]) policy.Call[int] {
	return func(ctx context.Context) (int, error) { return next(ctx) }
}
func (arrivalPassThrough) DecorateAsync(next policy.AsyncCall[int]) policy.AsyncCall[int] {
	return func(ctx context.Context) *async.Future[int] { return next(ctx) }
}

// taken reads what the composition's policies hold, to show that a refused call took
// nothing: permits, slots, breaker outcomes.
func taken(t *testing.T, reg *resilience.Registry, id string) string {
	t.Helper()
	s := ""
	if rl, err := reg.RateLimiter(id); err == nil {
		s += fmt.Sprintf("permits=%d ", rl.Snapshot().AvailablePermits)
	}
	if cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, id); err == nil {
		snap := cb.Snapshot()
		s += fmt.Sprintf("breaker=%v/%d/%d ", snap.State, snap.BufferedCalls, snap.NotPermittedCalls)
	}
	if b, err := resilience.Lookup[*bulkhead.Bulkhead](reg, bulkhead.Layer, id); err == nil {
		s += fmt.Sprintf("slots=%d ", b.Snapshot().AvailableSlots)
	}
	return s
}

// A call whose context is done when it arrives never runs the function and takes
// nothing, on every layer, sync and async; it returns the context's error. A nil
// context does the same with policy.ErrNilContext, and never panics.
func TestFaults_DoneOrNilContextNeverRunsTheFunction(t *testing.T) {
	for _, c := range arrivalCases() {
		for _, x := range ctxtest.OverContexts() {
			t.Run(c.name+"/"+x.Name, func(t *testing.T) {
				var events []policy.Event
				reg, _ := newRegistry(t, resilience.WithEventListener(func(e policy.Event) { events = append(events, e) }))
				runs := 0
				call, err := resilience.Wrap(reg, "Svc.Sync", func(context.Context) (int, error) { runs++; return 1, nil }, c.specs()...)
				require.NoError(t, err)
				acall, err := resilience.WrapAsync(reg, "Svc.Async", func(context.Context) *async.Future[int] {
					runs++
					return async.Completed(1)
				}, c.specs()...)
				require.NoError(t, err)
				before := taken(t, reg, "Svc.Sync") + taken(t, reg, "Svc.Async")

				_, err = call(x.Ctx)
				require.ErrorIs(t, err, x.Want)
				_, err = acall(x.Ctx).Await(context.Background())
				require.ErrorIs(t, err, x.Want)

				assert.Zero(t, runs, "the function never runs")
				assert.Equal(t, before, taken(t, reg, "Svc.Sync")+taken(t, reg, "Svc.Async"), "nothing taken")
				assert.Empty(t, events, "nothing happened to any policy")
			})
		}
	}
}

// A nil future returned by an async function fails the call's future with
// async.ErrNilFuture, through every layer, and never panics.
func TestFaults_NilFutureFailsTheCall(t *testing.T) {
	for _, c := range arrivalCases() {
		t.Run(c.name, func(t *testing.T) {
			reg, clk := newRegistry(t)
			call, err := resilience.WrapAsync(reg, "Svc.Async", func(context.Context) *async.Future[int] { return nil }, c.specs()...)
			require.NoError(t, err)
			f := call(context.Background())
			for range 10 { // retry delays, on the manual clock
				if _, done, _ := f.Result(); done {
					break
				}
				clk.Advance(time.Second)
			}
			v, done, err := f.Result()
			require.True(t, done)
			if c.name == "fallback" || c.name == "all" {
				require.NoError(t, err, "the fallback handles it")
				require.Equal(t, -1, v)
				return
			}
			require.ErrorIs(t, err, async.ErrNilFuture)
		})
	}
}

// A nil function given to a Pipeline's Execute is a coded error at call time.
func TestFaults_PipelineNilFunction(t *testing.T) {
	reg, _ := newRegistry(t)
	p, err := resilience.NewPipeline[int](reg, "Svc.Call", resilience.CircuitBreaker())
	require.NoError(t, err)
	_, err = p.Execute(context.Background(), nil)
	requireCode(t, err, r4c.BadSpec)
	_, err = p.ExecuteAsync(context.Background(), nil).Await(context.Background())
	requireCode(t, err, r4c.BadSpec)
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "Svc.Call")
	require.NoError(t, err)
	assert.Zero(t, cb.Snapshot().BufferedCalls)
	assert.Equal(t, circuitbreaker.Closed, cb.Snapshot().State)
}

// An order of many layer names is checked in linear time, and a message never repeats a
// huge layer name in full.
func TestFaults_LongOrderIsLinearAndClipped(t *testing.T) {
	names := make([]string, 40_000)
	for i := range names {
		names[i] = fmt.Sprintf("layer%d", i)
	}
	names = append(names, names[0]) // the last one twice
	_, err := resilience.NewRegistry(resilience.WithProperties(map[string]string{
		"instances.Svc.Call.composition.order": strings.Join(names, ","),
	}))
	ce := requireCode(t, err, r4c.BadOrder)
	assert.Contains(t, ce.Reason, "layer0 layer twice")

	huge := strings.Repeat("x", 100_000)
	reg, _ := newRegistry(t)
	_, err = resilience.Wrap(reg, "Svc.Call", func(context.Context) (int, error) { return 0, nil },
		resilience.Order(policy.Layer(huge)))
	ce = requireCode(t, err, r4c.BadOrder)
	assert.Less(t, len(ce.Error()), 2_000, "the message is bounded")
	assert.Contains(t, ce.Reason, "(100000 bytes)")
}

// A disabled policy lets calls through, but not one whose context is nil or done: on
// every layer, the function never runs then.
func TestFaults_DisabledLayersRefuseADoneContext(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, ctx := range []context.Context{canceled, nil} {
		reg, _ := newRegistry(t, resilience.WithProperties(map[string]string{
			"defaults.rateLimiter.enabled":    "false",
			"defaults.retry.enabled":          "false",
			"defaults.circuitBreaker.enabled": "false",
			"defaults.timeout.enabled":        "false",
			"defaults.bulkhead.enabled":       "false",
			"defaults.fallback.enabled":       "false",
		}))
		runs := 0
		specs := arrivalCases()[len(arrivalCases())-1].specs()
		specs = specs[:len(specs)-1] // no user layer: every layer is a disabled one
		call, err := resilience.Wrap(reg, "Svc.Sync", func(context.Context) (int, error) { runs++; return 1, nil }, specs...)
		require.NoError(t, err)
		acall, err := resilience.WrapAsync(reg, "Svc.Async", func(context.Context) *async.Future[int] {
			runs++
			return async.Completed(1)
		}, specs...)
		require.NoError(t, err)
		_, err = call(ctx)
		require.Error(t, err)
		_, err = acall(ctx).Await(context.Background())
		require.Error(t, err)
		assert.Zero(t, runs)

		v, err := call(context.Background())
		require.NoError(t, err, "a live context passes every disabled layer")
		require.Equal(t, 1, v)
		cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "Svc.Sync")
		require.NoError(t, err)
		require.Equal(t, circuitbreaker.Disabled, cb.Snapshot().State, "the layers are disabled")
		for range 5 {
			_, err = call(context.Background())
			require.NoError(t, err, "the disabled limiter of 2 permits lets every call through")
		}
	}
}

// nilPolicy is a user's policy type whose methods fail on a nil receiver.
type nilPolicy struct{ l policy.Layer }

func (p *nilPolicy) Layer() policy.Layer                                            { return p.l }
func (p *nilPolicy) Decorate(next policy.Call[int]) policy.Call[int]                { return next }
func (p *nilPolicy) DecorateAsync(next policy.AsyncCall[int]) policy.AsyncCall[int] { return next }

// A nil pointer given to Use is refused when wrapping, as a nil policy is, instead of
// panicking at the first call; a nil Pipeline refuses its calls.
func TestFaults_TypedNilPolicyAndNilPipeline(t *testing.T) {
	reg, _ := newRegistry(t)
	_, err := resilience.Wrap(reg, "Svc.Call", func(context.Context) (int, error) { return 0, nil },
		resilience.Use[int]((*nilPolicy)(nil)))
	requireCode(t, err, r4c.BadSpec)

	var p *resilience.Pipeline[int]
	require.NotPanics(t, func() {
		_, err = p.Execute(context.Background(), func(context.Context) (int, error) { return 1, nil })
		requireCode(t, err, r4c.BadSpec)
		_, err = p.ExecuteAsync(context.Background(), func(context.Context) *async.Future[int] { return async.Completed(1) }).
			Await(context.Background())
		requireCode(t, err, r4c.BadSpec)
	})
}

// No composition hands a nil future to its caller: with no policy, a user's policy alone,
// or disabled layers, a nil future from the function is a future failed with
// async.ErrNilFuture, as through the other layers.
func TestFaults_NoCompositionReturnsANilFuture(t *testing.T) {
	reg, _ := newRegistry(t, resilience.WithProperties(map[string]string{"defaults.retry.enabled": "false"}))
	for name, specs := range map[string][]resilience.Spec{
		"none":           nil,
		"user":           {resilience.Use[int](arrivalPassThrough{})},
		"disabled retry": {resilience.Retry()},
	} {
		call, err := resilience.WrapAsync(reg, "Svc."+strings.ReplaceAll(name, " ", ""), func(context.Context) *async.Future[int] { return nil }, specs...)
		require.NoError(t, err, name)
		f := call(context.Background())
		require.NotNil(t, f, name)
		_, err = f.Await(context.Background())
		require.ErrorIs(t, err, async.ErrNilFuture, name)
	}
}
