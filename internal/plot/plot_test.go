package plot

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSVGDrawsEverySeriesDeterministically(t *testing.T) {
	c := Chart{Title: "load <&>", XLabel: "s", YLabel: "calls", Series: []Series{
		{Name: "offered", Points: []Point{{0, 0}, {1, 10}, {2, 30}}},
		{Name: "bound", Points: []Point{{0, 12}, {2, 12}}, Dashed: true},
	}}
	got := string(c.SVG())
	require.Equal(t, got, string(c.SVG()), "the same chart draws the same bytes")
	assert.Equal(t, 2, strings.Count(got, "<polyline"))
	assert.Equal(t, 1, strings.Count(got, `stroke-dasharray="6 4" points=`))
	assert.Contains(t, got, "load &lt;&amp;&gt;", "the title is escaped")
	assert.Contains(t, got, ">30<", "the y axis ends at the largest y, rounded up")
	assert.True(t, strings.HasPrefix(got, "<svg ") && strings.HasSuffix(got, "</svg>\n"))
}

func TestSVGWithoutPointsDrawsTheFrame(t *testing.T) {
	got := string(Chart{Title: "empty", Series: []Series{{Name: "none"}}}.SVG())
	assert.NotContains(t, got, "<polyline")
	assert.Contains(t, got, "none")
}

func TestRoundUp(t *testing.T) {
	for v, want := range map[float64]float64{0: 1, -3: 1, 0.7: 0.8, 1: 1, 1.1: 1.2, 1.3: 1.5, 2.2: 2.5, 3: 3, 7: 8, 9: 10, 12: 12, 1098: 1200, 240: 250, 3500: 4000} {
		assert.Equal(t, want, roundUp(v), "roundUp(%v)", v)
	}
}

func TestSVGSeriesColor(t *testing.T) {
	got := string(Chart{Series: []Series{
		{Name: "a", Points: []Point{{0, 1}}, Color: "#123456"},
		{Name: "b", Points: []Point{{0, 1}}},
	}}.SVG())
	assert.Contains(t, got, `stroke="#123456" stroke-width="2" points=`, "a series' own colour")
	assert.Contains(t, got, `stroke="`+palette[0]+`" stroke-width="2" points=`, "the palette's first for the first series without one")
}

func TestXTicksAreRoundSteps(t *testing.T) {
	assert.Equal(t, []float64{0, 25, 50, 75, 100, 125}, xTicks(0, 129))
	assert.Equal(t, []float64{2000, 4000, 6000, 8000, 10000}, xTicks(250, 10000))
	assert.Equal(t, []float64{0, 2, 4, 6, 8, 10}, xTicks(0, 10))
	assert.InDeltaSlice(t, []float64{0.2, 0.4, 0.6, 0.8, 1}, xTicks(0.1, 1), 1e-9)
}
