package adaptivelimit_test

import (
	"bytes"
	"container/heap"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
)

var update = flag.Bool("update", false, "rewrite testdata/<algorithm>.svg from the convergence runs")

// The simulated load of the convergence runs.
const (
	callers   = 100                   // callers, each issuing its next call when the last completes
	knee      = 20                    // calls in flight the dependency serves without slowing down
	base      = 10 * time.Millisecond // its latency up to the knee, and per call in flight above it
	slowCalls = 6000                  // calls completed while the dependency is slow above the knee
	fastCalls = 2000                  // then calls completed while it takes base at any load
	settle    = 2000                  // calls within which the limit must enter the band
	bandLow   = 15
	bandHigh  = 30
	fastLimit = 50 // the limit must pass it within fastCalls once the dependency is fast
)

// dependency is the simulated dependency: a call takes base while at most knee calls
// are in flight and base more per call in flight above knee, fixed when it starts from
// the calls in flight then (itself included); once fast, base at any load. Its calls
// are completed by timers of the manual clock, whose deadlines it keeps so that the test
// can move the clock from one to the next.
type dependency struct {
	clk     *clock.Manual
	running int
	fast    bool
	due     deadlines
}

func (d *dependency) call(context.Context, int) *async.Future[struct{}] {
	d.running++
	latency := base
	if !d.fast && d.running > knee {
		latency += time.Duration(d.running-knee) * base
	}
	f, complete := async.NewPromise[struct{}]()
	heap.Push(&d.due, d.clk.Now()+latency)
	d.clk.AfterFunc(latency, func() {
		d.running--
		complete(struct{}{}, nil)
	})
	return f
}

// deadlines is a min-heap of clock times.
type deadlines []time.Duration

func (h deadlines) Len() int           { return len(h) }
func (h deadlines) Less(i, j int) bool { return h[i] < h[j] }
func (h deadlines) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *deadlines) Push(x any)        { *h = append(*h, x.(time.Duration)) }
func (h *deadlines) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// converge runs the simulated load through a limiter built with opts (and a manual
// clock, MaxWait 1h) and returns the limit after each completed call.
func converge(t *testing.T, opts ...adaptivelimit.Option) []int {
	t.Helper()
	clk := clock.NewManual()
	l, err := adaptivelimit.New(append([]adaptivelimit.Option{adaptivelimit.WithClock(clk),
		adaptivelimit.MaxWait(time.Hour)}, opts...)...)
	require.NoError(t, err)
	dep := &dependency{clk: clk}
	call := adaptivelimit.DecorateAsyncFunc(l, dep.call)
	limits := make([]int, 0, slowCalls+fastCalls)
	issued := callers
	var issue func()
	issue = func() {
		call(context.Background(), 0).OnComplete(func(_ struct{}, err error) {
			require.NoError(t, err)
			limits = append(limits, l.Limit())
			if len(limits) == slowCalls {
				dep.fast = true
			}
			if issued < slowCalls+fastCalls {
				issued++
				issue()
			}
		})
	}
	for range callers {
		issue()
	}
	for dep.due.Len() > 0 { // event by event
		clk.AdvanceTo(heap.Pop(&dep.due).(time.Duration))
	}
	require.Len(t, limits, slowCalls+fastCalls)
	assert.Zero(t, l.InFlight())
	assert.Zero(t, l.Queued())
	assert.Zero(t, clk.PendingTasks())
	return limits
}

// convergenceCases are the algorithms and what each needs besides the defaults.
var convergenceCases = []struct {
	algo string
	opts []adaptivelimit.Option
}{
	// AIMD knows no latency but LatencyThreshold: its default, 5s, is never reached at
	// these latencies (the limit would climb to MaxLimit). 50ms, five times the
	// dependency's latency without load, makes the calls that queue behind 4 or more
	// others drops.
	{adaptivelimit.AIMD, []adaptivelimit.Option{adaptivelimit.LatencyThreshold(50 * time.Millisecond)}},
	{adaptivelimit.Gradient2, nil},
	{adaptivelimit.Vegas, nil},
}

// convergenceStarts are the initial limits of the runs: below the band, the default,
// above it.
var convergenceStarts = []int{1, 20, 60}

// defaultInitialLimit is the InitialLimit of a limiter built with no option.
const defaultInitialLimit = 20

// SPEC AL-16: under a constant load of 100 callers, against a dependency that slows down
// past 20 calls in flight, each algorithm brings the limit into [15, 30] within 2,000
// calls and keeps it there (every sample after is checked), from an initial limit below
// the band, at the default (20) and above it; once the dependency is fast at any load,
// the limit passes 50 within 2,000 calls. SPEC AL-17: the runs are plotted in
// testdata/<algorithm>.svg (rewritten with -update; otherwise the plot must equal the
// file, so that the two cannot drift apart).
func TestConvergence(t *testing.T) {
	for _, tc := range convergenceCases {
		t.Run(string(tc.algo), func(t *testing.T) {
			runs := make([][]int, len(convergenceStarts))
			for i, start := range convergenceStarts {
				opts := append([]adaptivelimit.Option{adaptivelimit.UseAlgorithm(tc.algo),
					adaptivelimit.InitialLimit(start)}, tc.opts...)
				limits := converge(t, opts...)
				runs[i] = limits

				entered := -1
				for j, lim := range limits[:settle] {
					if lim >= bandLow && lim <= bandHigh {
						entered = j
						break
					}
				}
				require.GreaterOrEqual(t, entered, 0, "start %d: the limit never entered [%d, %d] within %d calls",
					start, bandLow, bandHigh, settle)
				for j := entered; j < slowCalls; j++ {
					require.True(t, limits[j] >= bandLow && limits[j] <= bandHigh,
						"start %d: the limit entered the band at call %d but is %d at call %d", start, entered+1, limits[j], j+1)
				}
				passed := -1
				for j, lim := range limits[slowCalls:] {
					if lim > fastLimit {
						passed = j
						break
					}
				}
				require.GreaterOrEqual(t, passed, 0, "start %d: the limit stayed at or below %d for %d calls once the dependency was fast",
					start, fastLimit, fastCalls)
				t.Logf("start %d: in the band from call %d; above %d %d calls after the switch", start, entered+1, fastLimit, passed+1)
			}

			svg := plot(tc.algo, runs)
			path := filepath.Join("testdata", string(tc.algo)+".svg")
			if *update {
				require.NoError(t, os.WriteFile(path, svg, 0o644))
				return
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test -run TestConvergence -update to write it")
			if !bytes.Equal(want, svg) {
				t.Errorf("%s differs from the runs' plot: run go test -run TestConvergence -update and review it", path)
			}
		})
	}
}

// plot draws the limit of each run after each completed call, as a hand-written SVG: the
// band [15, 30], the switch to a fast dependency, axes with ticks and labels, and one
// polyline per run (a step line, with a point only where the limit changes).
func plot(algo string, runs [][]int) []byte {
	const (
		width, height            = 900, 480
		left, right, top, bottom = 60, 20, 70, 60
		plotW, plotH             = width - left - right, height - top - bottom
		calls                    = slowCalls + fastCalls
	)
	yMax := 100
	for _, run := range runs {
		for _, lim := range run {
			for lim > yMax {
				yMax += 50
			}
		}
	}
	x := func(call int) float64 { return left + float64(call)*plotW/calls }
	y := func(limit int) float64 { return top + plotH - float64(limit)*plotH/float64(yMax) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="15" font-weight="bold">%s: limit on calls in flight, %d callers, a dependency that slows down past %d calls in flight</text>`+"\n",
		left, algo, callers, knee)
	// The band and the switch.
	fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%d" height="%.1f" fill="#2a9d8f" fill-opacity="0.15"/>`+"\n",
		x(0), y(bandHigh), plotW, y(bandLow)-y(bandHigh))
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="#2a7d6f" text-anchor="end">band [%d, %d]</text>`+"\n",
		x(slowCalls)-6, y(bandHigh)-4, bandLow, bandHigh)
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#888" stroke-dasharray="6 4"/>`+"\n",
		x(slowCalls), top, x(slowCalls), top+plotH)
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" fill="#555" text-anchor="end">dependency fast at any load →</text>`+"\n", x(slowCalls)-6, top+14)
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888" stroke-dasharray="2 3"/>`+"\n",
		x(slowCalls), y(fastLimit), x(calls), y(fastLimit))
	// Axes, ticks, labels.
	fmt.Fprintf(&b, `<path d="M%d %d V%d H%d" fill="none" stroke="black"/>`+"\n", left, top, top+plotH, left+plotW)
	for c := 0; c <= calls; c += 1000 {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black"/>`, x(c), top+plotH, x(c), top+plotH+5)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%d</text>`+"\n", x(c), top+plotH+19, c)
	}
	for lim := 0; lim <= yMax; lim += 5 {
		if lim%50 != 0 && lim != bandLow && lim != bandHigh {
			continue
		}
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="black"/>`, left-5, y(lim), left, y(lim))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%d</text>`+"\n", left-8, y(lim)+4, lim)
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">calls completed</text>`+"\n", x(calls/2), height-14)
	fmt.Fprintf(&b, `<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle">limit</text>`+"\n", y(yMax/2))
	// The runs, the default start last (on top).
	colors := []string{"#c1121f", "#264653", "#f4a261"}
	widths := []string{"1.2", "2", "1.2"}
	order := []int{0, 2, 1}
	for _, i := range order {
		run := runs[i]
		var pts strings.Builder
		prev := -1
		for c, lim := range run {
			if lim == prev {
				continue
			}
			if prev >= 0 {
				fmt.Fprintf(&pts, "%.1f,%.1f ", x(c), y(prev))
			}
			fmt.Fprintf(&pts, "%.1f,%.1f ", x(c), y(lim))
			prev = lim
		}
		fmt.Fprintf(&pts, "%.1f,%.1f", x(len(run)), y(prev))
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="%s" points="%s"/>`+"\n", colors[i], widths[i], pts.String())
	}
	// The legend.
	for i, start := range convergenceStarts {
		lx, ly := left+200*i, 48
		label := fmt.Sprintf("initial limit %d", start)
		if start == defaultInitialLimit {
			label += " (default)"
		}
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="%s"/>`, lx, ly-4, lx+25, ly-4, colors[i], widths[i])
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", lx+32, ly, label)
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}
