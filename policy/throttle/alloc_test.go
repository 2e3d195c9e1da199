package throttle_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/policy/observe"
	"github.com/resilience4go/resilience4go/policy/throttle"
)

// SPEC TH-10: an admitted synchronous call and a rejected one allocate nothing, with the default
// random source, with a recorder or without.
func TestZeroAllocations(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []throttle.Option
	}{
		{"bare", nil},
		{"recorder", []throttle.Option{throttle.Observe(contracttest.NopObserver{})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			th, err := throttle.New(tc.opts...)
			require.NoError(t, err)
			var fail error
			call := throttle.DecorateFunc(th, func(context.Context, int) (int, error) { return 1, fail })
			ctx := context.Background()
			assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = call(ctx, 0) }), "admitted")
			assert.Zero(t, th.Snapshot().Probability)

			fail = errRefused
			for th.Snapshot().Probability < 0.9 {
				_, _ = call(ctx, 0)
			}
			rejected := 0
			assert.Zero(t, testing.AllocsPerRun(1000, func() {
				if _, err := call(ctx, 0); err != nil && err != errRefused {
					rejected++
				}
			}), "rejected or refused")
			assert.Positive(t, rejected)
		})
	}
}

// SPEC TH-7: the recorder is told each decision once, with the call's context: admitted, or
// rejected with the rejection; the rejection event reaches it too.
func TestRecorder(t *testing.T) {
	obs := &contracttest.Observer{}
	f := newFixture(t, throttle.Observe(obs))
	rec := obs.Of(throttle.Layer, "backend")
	ctx := contracttest.MarkedContext()
	call := throttle.DecorateFunc(f.t, func(context.Context, int) (int, error) { return 0, errRefused })
	_, _ = call(ctx, 0)
	f.src.draws(0)
	_, err := call(ctx, 0)
	require.ErrorIs(t, err, throttle.ErrThrottled)
	contracttest.RequireOutcomes(t, rec,
		observe.Outcome{Result: observe.ResultAdmitted},
		observe.Outcome{Result: observe.ResultRejected, Err: err})
	assert.Equal(t, []any{"marker", "marker"}, contracttest.Markers(rec.Contexts()))
	require.Len(t, rec.Events(), 1)
	assert.Equal(t, throttle.EventRejected, rec.Events()[0].Kind)
	assert.Equal(t, []any{"marker"}, contracttest.Markers(rec.EventContexts()))
}

// Calls from many goroutines, admitted, refused and rejected, with reconfigurations
// between them, leave a consistent window: every call that ran or was rejected is one
// request, every success one accept (the race detector checks the rest).
func TestConcurrentCalls(t *testing.T) {
	// The default random source, which the goroutines draw from concurrently.
	th := mustThrottle(t, throttle.Window(time.Hour), throttle.MaxRejection(0.5), throttle.WithClock(clock.NewManual()))
	var ok, refused, rejected atomic.Int64
	call := throttle.DecorateFunc(th, func(_ context.Context, i int) (int, error) {
		if i%3 == 0 {
			return 0, nil
		}
		return 0, errRefused
	})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				switch _, err := call(context.Background(), g+i); {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, throttle.ErrThrottled):
					rejected.Add(1)
				default:
					refused.Add(1)
				}
			}
		})
	}
	wg.Go(func() {
		for k := range 50 {
			c := th.Config()
			c.K = 1 + float64(k%3)
			_ = th.Reconfigure(c)
			_ = th.Snapshot()
		}
	})
	wg.Wait()
	s := th.Snapshot()
	assert.Equal(t, int(ok.Load()+refused.Load()+rejected.Load()), s.Requests)
	assert.Equal(t, int(ok.Load()), s.Accepts)
	assert.Positive(t, rejected.Load())
}

func mustThrottle(t *testing.T, opts ...throttle.Option) *throttle.Throttle {
	t.Helper()
	th, err := throttle.New(opts...)
	require.NoError(t, err)
	return th
}
