package retrybudget_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/plot"
	"github.com/resilience4go/resilience4go/internal/plottest"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/retrybudget"
	"github.com/resilience4go/resilience4go/resilience"
)

// The simulation: 100 calls per second for 10s, alternately through two compositions
// ("A" and "B"), each with a retry of 3 attempts and no delay, in front of a dependency
// that fails every call; sampled every 100ms.
const (
	simCalls    = 1000
	simInterval = 10 * time.Millisecond
	simSample   = 10 // calls per sample
)

// simulate offers the load to compositions made with specs, and returns the dependency's
// calls after each sample, cumulated.
func simulate(t *testing.T, specs ...resilience.Spec) []int {
	t.Helper()
	reg, clk, _ := newRegistry(t)
	n := 0
	dep := failing(&n)
	var calls [2]func(context.Context) (int, error)
	for i, id := range []string{"A", "B"} {
		c, err := resilience.Wrap(reg, id, dep, append([]resilience.Spec{
			resilience.Retry(retry.MaxAttempts(3), retry.Delay(0))}, specs...)...)
		require.NoError(t, err)
		calls[i] = c
	}
	var samples []int
	for i := range simCalls {
		clk.AdvanceTo(time.Duration(i) * simInterval)
		_, err := calls[i%2](context.Background())
		require.ErrorIs(t, err, errBoom)
		if (i+1)%simSample == 0 {
			samples = append(samples, n)
		}
	}
	return samples
}

// SPEC RB-11: a dependency that fails every call, behind a retry of 3 attempts, receives
// 3× the offered calls without a budget; with a 20% budget (floor 10/s over 10s) shared by
// two compositions, at most 1.2× the offered calls plus the floor over the 10s window.
func TestRB11_RetryStormSimulation(t *testing.T) {
	without := simulate(t)
	with := simulate(t, resilience.RetryBudget(retrybudget.Ratio(0.2), retrybudget.MinPerSecond(10),
		retrybudget.Window(10*time.Second), retrybudget.Name("deps")))
	const floor = 100 // 10/s × 10s
	assert.Equal(t, 3*simCalls, without[len(without)-1], "3 attempts per call")
	got := with[len(with)-1]
	assert.LessOrEqual(t, got, simCalls*12/10+floor)
	// The floor's 100 extra attempts go to the first 50 calls; then 20% of the calls.
	assert.Equal(t, simCalls+200, got)
	assert.Equal(t, 150, with[4], "50 calls, 2 retries each")
	for i, n := range with {
		offered := (i + 1) * simSample
		assert.LessOrEqual(t, n, offered*12/10+floor, "at %d calls", offered)
	}

	series := func(name string, ys func(i int) int, dashed bool) plot.Series {
		s := plot.Series{Name: name, Dashed: dashed}
		for i := range with {
			x := float64(i+1) * float64(simSample*simInterval) / float64(time.Second)
			s.Points = append(s.Points, plot.Point{X: x, Y: float64(ys(i))})
		}
		return s
	}
	plottest.Check(t, "retrybudget.svg", plot.Chart{
		Title:  "A dependency that fails every call, retry of 3 attempts",
		XLabel: "time (s)",
		YLabel: "dependency calls, cumulated",
		Series: []plot.Series{
			series("offered", func(i int) int { return (i + 1) * simSample }, false),
			series("no budget", func(i int) int { return without[i] }, false),
			series("20% budget", func(i int) int { return with[i] }, false),
			series("1.2× offered + floor", func(i int) int { return (i+1)*simSample*12/10 + floor }, true),
		},
	})
}
