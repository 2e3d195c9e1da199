package throttle_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
