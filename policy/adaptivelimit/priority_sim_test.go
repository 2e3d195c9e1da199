package adaptivelimit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	chart "github.com/resilience4go/resilience4go/internal/plot"
	"github.com/resilience4go/resilience4go/internal/plottest"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
)

// The priority run of the convergence scenario: its dependency (base latency up to knee
// calls in flight, base more per call above), with twice knee callers, half of them
// critical and half sheddable, each issuing its next call when the last completes, or
// base after a rejection. A call waits up to prioWait for room.
const (
	prioCallers = 2 * knee
	prioWait    = 5 * base
	prioEnd     = 10 * time.Second
	prioBin     = 250 * time.Millisecond
)

// prioCounts are the calls of one priority: let in, by bin of prioBin, and in all, and
// refused.
type prioCounts struct {
	admitted         []int
	total, refused   int
	refusedNotByRoom int // refused with another error than the limiter's rejection
}

// simulatePriorities runs the scenario through a limiter with the defaults (Vegas,
// InitialLimit 20, PriorityReserve 0.5) and returns the counts of the critical and
// sheddable callers' calls, and the limit at each bin's end.
func simulatePriorities(t *testing.T, priorities bool) (critical, sheddable prioCounts, limits, running []int) {
	t.Helper()
	clk := clock.NewManual()
	l, err := adaptivelimit.New(adaptivelimit.WithClock(clk), adaptivelimit.MaxWait(prioWait))
	require.NoError(t, err)
	dep := &dependency{clk: clk}
	bins := int(prioEnd / prioBin)
	critical.admitted, sheddable.admitted = make([]int, bins), make([]int, bins)
	countsOf := func(ctx context.Context) *prioCounts {
		if ctx.Value(sheddableCaller{}) != nil {
			return &sheddable
		}
		return &critical
	}
	call := adaptivelimit.DecorateAsyncFunc(l, func(ctx context.Context, n int) *async.Future[struct{}] {
		if bin := int(clk.Now() / prioBin); bin < bins {
			countsOf(ctx).admitted[bin]++
		}
		return dep.call(ctx, n)
	})
	var issue func(ctx context.Context)
	issue = func(ctx context.Context) {
		if clk.Now() >= prioEnd {
			return
		}
		call(ctx, 0).OnComplete(func(_ struct{}, err error) {
			c := countsOf(ctx)
			c.total++
			if err == nil {
				issue(ctx)
				return
			}
			c.refused++
			if !errors.Is(err, adaptivelimit.ErrLimitExceeded) {
				c.refusedNotByRoom++
			}
			clk.AfterFunc(base, func() { issue(ctx) })
		})
	}
	for i := range prioCallers {
		p := policy.PriorityCritical
		if i%2 == 1 {
			p = policy.PrioritySheddable
		}
		ctx := context.Background()
		if p == policy.PrioritySheddable {
			ctx = context.WithValue(ctx, sheddableCaller{}, true)
		}
		if priorities {
			ctx = policy.WithPriority(ctx, p)
		}
		issue(ctx)
	}
	most := 0 // the most calls at the dependency within the bin
	for clk.Now() < prioEnd+time.Second {
		clk.Advance(time.Millisecond)
		most = max(most, dep.running)
		if clk.Now()%prioBin == 0 && clk.Now() <= prioEnd {
			limits = append(limits, l.Limit())
			running = append(running, most)
			most = 0
		}
	}
	assert.Zero(t, l.InFlight())
	assert.Zero(t, l.Queued())
	assert.Zero(t, clk.PendingTasks())
	return critical, sheddable, limits, running
}

// sheddableCaller marks the context of a caller meant as sheddable, also in the run
// without priorities.
type sheddableCaller struct{}

// SPEC PR-7: in the convergence scenario with twice knee callers, half critical and half
// sheddable, at least 99% of the critical calls are let in and the sheddable ones take
// the rejections; the calls at the dependency stay within the convergence band. The
// limit settles higher than without priorities (sheddable calls probe it only below their
// share), but fewer calls reach the dependency, and more critical ones complete: the same
// callers without priorities get fewer than half as many critical calls through, some of
// them refused. The run is drawn in docs/static/plots/priority-adaptivelimit.svg.
func TestPriority_PR7_AdaptiveLimitSimulation(t *testing.T) {
	critical, sheddable, limits, running := simulatePriorities(t, true)
	t.Logf("critical %d of %d let in, sheddable %d of %d; limits %v; at the dependency %v",
		critical.total-critical.refused, critical.total, sheddable.total-sheddable.refused, sheddable.total, limits, running)
	assert.GreaterOrEqual(t, float64(critical.total-critical.refused), 0.99*float64(critical.total))
	assert.GreaterOrEqual(t, float64(sheddable.refused), 0.99*float64(critical.refused+sheddable.refused),
		"the rejections fall on the sheddable calls")
	assert.Zero(t, critical.refusedNotByRoom+sheddable.refusedNotByRoom)
	for i, n := range running {
		assert.True(t, n >= bandLow && n <= bandHigh, "%d calls at the dependency in bin %d", n, i)
	}

	plain, _, _, _ := simulatePriorities(t, false)
	t.Logf("without priorities: critical %d of %d let in", plain.total-plain.refused, plain.total)
	assert.Less(t, 2*(plain.total-plain.refused), critical.total-critical.refused)

	rate := func(c prioCounts) []chart.Point {
		var pts []chart.Point
		for bin, n := range c.admitted {
			pts = append(pts, chart.Point{X: (float64(bin) + 0.5) * prioBin.Seconds(), Y: float64(n) / prioBin.Seconds()})
		}
		return pts
	}
	capacity := float64(knee) / base.Seconds()
	plottest.Check(t, "priority-adaptivelimit.svg", chart.Chart{
		Title:  "Adaptive limit, 40 callers, half critical; dependency: 20 at once, 10ms",
		XLabel: "time (s)", YLabel: "calls let in per second",
		Series: []chart.Series{
			{Name: "critical", Points: rate(critical)},
			{Name: "sheddable", Points: rate(sheddable)},
			{Name: "critical, no priorities", Points: rate(plain)},
			{Name: "capacity", Points: []chart.Point{{X: 0, Y: capacity}, {X: prioEnd.Seconds(), Y: capacity}}, Dashed: true},
		},
	})
}
