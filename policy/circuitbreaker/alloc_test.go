package circuitbreaker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy"
	cb "github.com/resilience4go/resilience4go/policy/circuitbreaker"
)

func okFunc(context.Context, int) (int, error)   { return 1, nil }
func failFunc(context.Context, int) (int, error) { return 0, errBoom }

func allocBreaker(t testing.TB, clk clock.Clock, opts ...cb.Option) *cb.Breaker {
	b, err := cb.New(append([]cb.Option{cb.WithClock(clk), cb.SlidingWindowSize(10), cb.MinimumCalls(10),
		cb.WaitInOpen(time.Hour)}, opts...)...)
	require.NoError(t, err)
	return b
}

func TestAllocsAdmittedAndRejected(t *testing.T) {
	ctx := context.Background()
	for name, clk := range map[string]clock.Clock{"manual": clock.NewManual(), "system": clock.System()} {
		for _, withListener := range []bool{false, true} {
			var opts []cb.Option
			if withListener {
				opts = append(opts, cb.OnEvent(func(policy.Event) {}))
			}
			t.Run(fmt.Sprintf("%s/listener=%v", name, withListener), func(t *testing.T) {
				b := allocBreaker(t, clk, opts...)
				okCall := cb.DecorateFunc(b, okFunc)
				failCall := cb.DecorateFunc(b, failFunc)
				assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = okCall(ctx, 0) }), "admitted success")
				assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = failCall(ctx, 0) }), "admitted failure, then rejected")
				require.Equal(t, cb.Open, b.State())
				assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = okCall(ctx, 0) }), "rejected while open")
				_ = b.TransitionTo(cb.ForcedOpen)
				assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = okCall(ctx, 0) }), "rejected while forced open")
				_ = b.TransitionTo(cb.Disabled)
				assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = okCall(ctx, 0) }), "disabled")
			})
		}
	}
}

func TestAllocsAsyncRejected(t *testing.T) {
	b := allocBreaker(t, clock.NewManual(), cb.SlidingWindowSize(1))
	call := cb.DecorateAsyncFunc(b, func(context.Context, int) *async.Future[int] { return async.Failed[int](errBoom) })
	ctx := context.Background()
	_, _ = call(ctx, 0).Await(ctx)
	require.Equal(t, cb.Open, b.State())
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = call(ctx, 0) }), "rejected while open")
	_ = b.TransitionTo(cb.ForcedOpen)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = call(ctx, 0) }), "rejected while forced open")
	f := call(ctx, 0)
	assert.False(t, f.Cancel(), "a shared rejection cannot be canceled")
	_, err := f.Await(ctx)
	var oe *cb.OpenError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, cb.ForcedOpen, oe.State())
}

func TestAllocsTimeBasedWindow(t *testing.T) {
	clk := clock.NewManual()
	b := allocBreaker(t, clk, cb.SlidingWindowType(cb.TimeBased), cb.FailureRateThreshold(100))
	call := cb.DecorateFunc(b, okFunc)
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		clk.Advance(300 * time.Millisecond)
		_, _ = call(ctx, 0)
	}))
}

func BenchmarkAdmitted(b *testing.B) {
	br := allocBreaker(b, clock.System())
	call := cb.DecorateFunc(br, okFunc)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = call(ctx, 0)
	}
}

func BenchmarkAdmittedParallel(b *testing.B) {
	br := allocBreaker(b, clock.System())
	call := cb.DecorateFunc(br, okFunc)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = call(ctx, 0)
		}
	})
}

func openBreaker(b *testing.B) decorate.Func[int, int] {
	br := allocBreaker(b, clock.System(), cb.SlidingWindowSize(1))
	_, _ = cb.DecorateFunc(br, failFunc)(context.Background(), 0)
	if br.State() != cb.Open {
		b.Fatal("breaker not open")
	}
	return cb.DecorateFunc(br, okFunc)
}

func BenchmarkRejected(b *testing.B) {
	call := openBreaker(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = call(ctx, 0)
	}
}

func BenchmarkRejectedParallel(b *testing.B) {
	call := openBreaker(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = call(ctx, 0)
		}
	})
}

// PERF-BREAKER: a closed-state success allocates nothing, without a threshold (the lean
// path), with one, and with a recorder that wants latencies or not.
func TestCB3_ClosedSuccessAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	for name, opts := range map[string][]cb.Option{
		"default":          nil,
		"threshold":        {cb.SlowCallThreshold(time.Second)},
		"timed recorder":   {cb.Observe(contracttest.NopObserver{})},
		"untimed recorder": {cb.Observe(untimedObserver{})},
		"time-based":       {cb.SlidingWindowType(cb.TimeBased)},
	} {
		t.Run(name, func(t *testing.T) {
			b := allocBreaker(t, clock.System(), opts...)
			call := cb.DecorateFunc(b, okFunc)
			for range 20 {
				_, _ = call(ctx, 0)
			}
			assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = call(ctx, 0) }))
		})
	}
}
