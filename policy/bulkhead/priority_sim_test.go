package bulkhead_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/plot"
	"github.com/resilience4go/resilience4go/internal/plottest"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
)

// The simulated load of the priority simulation: calls of a fixed duration against a
// bulkhead of simSlots, so that it serves simSlots/simCall calls per second (200/s).
// Each tick, one critical and one sheddable call may arrive (the sheddable first): every
// simLight ticks in the light phases (each priority a quarter of the capacity, the two
// half of it), every tick in the overload phase (each priority the whole capacity, the
// two twice it).
const (
	simSlots    = 20
	simCall     = 100 * time.Millisecond
	simTick     = 5 * time.Millisecond
	simLight    = 4
	simOverFrom = 2 * time.Second
	simOverTo   = 8 * time.Second
	simEnd      = 10 * time.Second
	simBin      = 250 * time.Millisecond
)

// simCounts are the calls of one priority, by bin of simBin and in the overload phase.
type simCounts struct {
	admitted         []int // by bin
	offered, refused int   // in the overload phase
	refusedLight     int   // in the light phases, but for one call's length after the overload
}

// simulate runs the load through a bulkhead of simSlots (MaxWait 0, the default reserve)
// on a manual clock; with priorities false, no call carries a priority. It returns the
// counts of the calls meant as critical and of those meant as sheddable.
func simulate(t *testing.T, priorities bool) (critical, sheddable simCounts) {
	t.Helper()
	clk := clock.NewManual()
	b, err := bulkhead.New(bulkhead.MaxConcurrent(simSlots), bulkhead.WithClock(clk))
	require.NoError(t, err)
	bins := int(simEnd / simBin)
	critical.admitted, sheddable.admitted = make([]int, bins), make([]int, bins)
	ctxOf := func(p policy.Priority) context.Context {
		if !priorities {
			return context.Background()
		}
		return policy.WithPriority(context.Background(), p)
	}
	shedCtx, critCtx := ctxOf(policy.PrioritySheddable), ctxOf(policy.PriorityCritical)
	arrive := func(ctx context.Context, c *simCounts, now time.Duration, over bool) {
		if over {
			c.offered++
		}
		if b.Acquire(ctx) != nil {
			switch {
			case over:
				c.refused++
			case now < simOverFrom || now >= simOverTo+simCall:
				c.refusedLight++
			}
			return
		}
		c.admitted[now/simBin]++
		clk.AfterFunc(simCall, b.Release)
	}
	for tick := 0; time.Duration(tick)*simTick < simEnd; tick++ {
		now := clk.Now()
		over := now >= simOverFrom && now < simOverTo
		if over || tick%simLight == 0 {
			arrive(shedCtx, &sheddable, now, over)
			arrive(critCtx, &critical, now, over)
		}
		clk.Advance(simTick) // completes the calls due by the next tick first
	}
	clk.Advance(simCall)
	assert.Equal(t, simSlots, b.Snapshot().AvailableSlots)
	return critical, sheddable
}

// SPEC PR-6: offered twice a bulkhead's capacity, half critical and half sheddable, at
// least 99% of the critical calls are let in, the sheddable ones take the rejections, and
// the bulkhead stays busy; in the light phases every call is let in (but for sheddable
// ones while the overload's calls drain). Without priorities
// the same load loses about half of the critical calls. The run is drawn in
// docs/static/plots/priority-bulkhead.svg.
func TestPriority_PR6_BulkheadSimulation(t *testing.T) {
	critical, sheddable := simulate(t, true)
	t.Logf("overload: critical %d of %d let in, sheddable %d of %d", critical.offered-critical.refused,
		critical.offered, sheddable.offered-sheddable.refused, sheddable.offered)
	assert.GreaterOrEqual(t, float64(critical.offered-critical.refused), 0.99*float64(critical.offered))
	assert.GreaterOrEqual(t, float64(sheddable.refused), 0.99*float64(critical.refused+sheddable.refused),
		"the rejections fall on the sheddable calls")
	assert.Zero(t, critical.refusedLight+sheddable.refusedLight, "nothing refused in the light phases")
	for bin := int((simOverFrom + simCall) / simBin); bin < int(simOverTo/simBin); bin++ {
		perSecond := float64(critical.admitted[bin]+sheddable.admitted[bin]) * float64(time.Second/simBin)
		assert.InDelta(t, simSlots*float64(time.Second/simCall), perSecond, 10, "bin %d: the bulkhead is busy", bin)
	}

	plain, _ := simulate(t, false)
	t.Logf("without priorities: critical %d of %d let in", plain.offered-plain.refused, plain.offered)
	assert.Less(t, float64(plain.offered-plain.refused), 0.6*float64(plain.offered))

	rate := func(c simCounts) []plot.Point {
		var pts []plot.Point
		for bin, n := range c.admitted {
			pts = append(pts, plot.Point{X: (float64(bin) + 0.5) * simBin.Seconds(), Y: float64(n) / simBin.Seconds()})
		}
		return pts
	}
	level := func(y float64) []plot.Point { return []plot.Point{{X: 0, Y: y}, {X: simEnd.Seconds(), Y: y}} }
	capacity := float64(simSlots) / simCall.Seconds()
	offered := []plot.Point{{X: 0, Y: capacity / simLight}, {X: simOverFrom.Seconds(), Y: capacity / simLight},
		{X: simOverFrom.Seconds(), Y: capacity}, {X: simOverTo.Seconds(), Y: capacity},
		{X: simOverTo.Seconds(), Y: capacity / simLight}, {X: simEnd.Seconds(), Y: capacity / simLight}}
	plottest.Check(t, "priority-bulkhead.svg", plot.Chart{
		Title:  "Bulkhead of 20, calls of 100ms: 2× its capacity from 2s to 8s, half of it critical",
		XLabel: "time (s)", YLabel: "calls let in per second",
		Series: []plot.Series{
			{Name: "critical", Points: rate(critical)},
			{Name: "sheddable", Points: rate(sheddable)},
			{Name: "capacity", Points: level(capacity), Dashed: true},
			{Name: "offered, each", Points: offered, Dashed: true},
		},
	})
}
