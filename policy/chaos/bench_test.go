package chaos_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"

	"github.com/resilience4go/resilience4go/policy/chaos"
)

// pathCases are the paths of a call through a chaos policy: disabled; enabled and left
// alone by the draw (a rate of 1e-12 draws on every call and never injects), from the
// global source or a seeded one; enabled and injected into (the default fault, no
// listener).
var pathCases = []struct {
	name string
	opts []chaos.Option
}{
	{"disabled", []chaos.Option{chaos.Rate(1)}},
	{"enabled/not_injected", []chaos.Option{chaos.Enabled(true), chaos.Rate(1e-12)}},
	{"enabled/not_injected/seeded", []chaos.Option{chaos.Enabled(true), chaos.Rate(1e-12), chaos.Seed(1)}},
	{"enabled/injected", []chaos.Option{chaos.Enabled(true), chaos.Rate(1)}},
}

// SPEC CH-12: no path of a synchronous call allocates, and a call that is not injected
// into allocates nothing asynchronously either (its future is the function's); an
// injected fault returned as a future allocates that future only.
func TestCH12_Allocations(t *testing.T) {
	ctx := context.Background()
	for _, pc := range pathCases {
		c, err := chaos.New(pc.opts...)
		require.NoError(t, err)
		call := chaos.DecorateFunc(c, func(context.Context, int) (int, error) { return 1, nil })
		assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = call(ctx, 1) }), pc.name)
	}
	done := async.Completed(1)
	for _, pc := range pathCases[:3] {
		c, err := chaos.New(pc.opts...)
		require.NoError(t, err)
		call := chaos.DecorateAsyncFunc(c, func(context.Context, int) *async.Future[int] { return done })
		assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = call(ctx, 1) }), pc.name)
	}
	c, err := chaos.New(pathCases[3].opts...)
	require.NoError(t, err)
	call := chaos.DecorateAsyncFunc(c, func(context.Context, int) *async.Future[int] { return done })
	assert.Equal(t, 1.0, testing.AllocsPerRun(1000, func() { _ = call(ctx, 1) }), "async injected fault: its failed future")
}

func BenchmarkChaos(b *testing.B) {
	ctx := context.Background()
	for _, pc := range pathCases {
		b.Run(pc.name, func(b *testing.B) {
			c, err := chaos.New(pc.opts...)
			require.NoError(b, err)
			call := chaos.DecorateFunc(c, func(context.Context, int) (int, error) { return 1, nil })
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					_, _ = call(ctx, 1)
				}
			})
		})
	}
}
