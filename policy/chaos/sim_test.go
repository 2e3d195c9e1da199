package chaos_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/plot"
	"github.com/resilience4go/resilience4go/internal/plottest"
	"github.com/resilience4go/resilience4go/policy/chaos"
)

// SPEC CH-3: the docs' chart. For rates 0.02, 0.05 and 0.1, seeded, 10,000 calls one
// after another: the running count of injected calls stays within the 99.9% binomial
// band of its rate at every checkpoint (every 250 calls), and the chart draws the counts
// with each band dashed.
func TestCH3_Simulation(t *testing.T) {
	const calls, step = 10_000, 250
	chart := plot.Chart{Title: "Injected calls at three rates (seed 1), with the 99.9% binomial bands",
		XLabel: "calls", YLabel: "injected calls"}
	colors := []string{"#1f6fb4", "#d1495b", "#2a8a3e"}
	for r, rate := range []float64{0.02, 0.05, 0.1} {
		c, err := chaos.New(chaos.Enabled(true), chaos.Rate(rate), chaos.Seed(1))
		require.NoError(t, err)
		call := chaos.NewPolicy[int](c).Decorate(func(context.Context) (int, error) { return 1, nil })
		count := plot.Series{Name: fmt.Sprintf("rate %v", rate), Color: colors[r]}
		var upper, lower []plot.Point
		injected := 0
		for i := 1; i <= calls; i++ {
			if _, err := call(context.Background()); err != nil {
				injected++
			}
			if i%step != 0 {
				continue
			}
			lo, hi := binomialBounds(i, rate, 3.29)
			assert.True(t, injected >= lo && injected <= hi, "rate %v: %d injected in %d calls, outside [%d, %d]",
				rate, injected, i, lo, hi)
			count.Points = append(count.Points, plot.Point{X: float64(i), Y: float64(injected)})
			upper = append(upper, plot.Point{X: float64(i), Y: float64(hi)})
			lower = append([]plot.Point{{X: float64(i), Y: float64(max(lo, 0))}}, lower...)
		}
		assert.Equal(t, uint64(injected), c.Snapshot().Errors)
		chart.Series = append(chart.Series, count,
			plot.Series{Name: fmt.Sprintf("rate %v: band", rate), Points: append(upper, lower...), Dashed: true, Color: colors[r]})
	}
	plottest.Check(t, "chaos.svg", chart)
}
