package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/resilience4go/resilience4go/resilienceotel"
)

// sample is what the picture needs of the metrics, read after one step of the script.
type sample struct {
	at       time.Duration    // the step's time on the manual clock
	permits  int64            // resilience.rate_limiter.available_permits
	rejected map[string]int64 // resilience.calls rejected so far, by layer
	state    string           // the breaker's state: the resilience.circuit_breaker.state series at 1
	bounds   []float64        // the upper bounds of resilience.circuit_breaker.call.duration's buckets, s
	buckets  []uint64         // the calls so far (succeeded and failed) in each bucket, +Inf last
}

// readSample collects the metrics through reader and keeps what the picture draws.
func readSample(ctx context.Context, reader *sdkmetric.ManualReader, at time.Duration) (sample, error) {
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		return sample{}, err
	}
	s := sample{at: at, rejected: map[string]int64{}}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != resilienceotel.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			switch data := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range data.DataPoints {
					switch m.Name {
					case "resilience.rate_limiter.available_permits":
						s.permits = p.Value
					case resilienceotel.Calls:
						if attr(p.Attributes, "outcome") == "rejected" {
							s.rejected[attr(p.Attributes, "layer")] = p.Value
						}
					case "resilience.circuit_breaker.state":
						if p.Value == 1 {
							s.state = attr(p.Attributes, "state")
						}
					}
				}
			case metricdata.Histogram[float64]:
				if m.Name != "resilience.circuit_breaker.call.duration" {
					continue
				}
				for _, p := range data.DataPoints {
					if o := attr(p.Attributes, "outcome"); o != "succeeded" && o != "failed" {
						continue // an ignored error: one of our own limits refused the call
					}
					if s.buckets == nil {
						s.bounds, s.buckets = p.Bounds, make([]uint64, len(p.BucketCounts))
					}
					for i, c := range p.BucketCounts {
						s.buckets[i] += c
					}
				}
			}
		}
	}
	return s, nil
}

// attr returns the value of the attribute key of set; "" if it has none.
func attr(set attribute.Set, key string) string {
	v, _ := set.Value(attribute.Key(key))
	return v.AsString()
}

// quantile estimates the q-quantile of the observations counted in buckets (one count per
// bucket, whose upper bounds are bounds, then +Inf) as Prometheus' histogram_quantile
// does: linear interpolation within the bucket where the rank falls, from 0 for the first
// bucket, the highest finite bound for the +Inf bucket. False when there is none.
func quantile(q float64, bounds []float64, buckets []uint64) (float64, bool) {
	var total uint64
	for _, c := range buckets {
		total += c
	}
	if total == 0 || len(bounds) == 0 {
		return 0, false
	}
	rank := q * float64(total)
	var below uint64
	for i, c := range buckets {
		if float64(below+c) >= rank && c > 0 {
			if i == len(bounds) {
				return bounds[len(bounds)-1], true
			}
			lower := 0.0
			if i > 0 {
				lower = bounds[i-1]
			}
			return lower + (bounds[i]-lower)*(rank-float64(below))/float64(c), true
		}
		below += c
	}
	return bounds[len(bounds)-1], true
}

// The picture's geometry, in pixels: two rows of two panels under a header.
const (
	picWidth  = 960
	picHeight = 620
	header    = 56
	gap       = 16
	panelW    = (picWidth - 3*gap) / 2
	panelH    = (picHeight - header - 3*gap) / 2
	padLeft   = 56
	padRight  = 18
	padTop    = 46
	padBottom = 30
)

// Grafana's dark theme.
const (
	colBackground = "#111217"
	colPanel      = "#181b1f"
	colBorder     = "#2c3235"
	colGrid       = "#2c3235"
	colText       = "#ccccdc"
	colMuted      = "#8e8e9a"
	colGreen      = "#73bf69"
	colYellow     = "#fade2a"
	colRed        = "#f2495c"
	colBlue       = "#5794f2"
	colPurple     = "#b877d9"
	colOrange     = "#ff9830"
)

// series is one line of a panel: a value per step; NaN where there is none.
type series struct {
	name   string
	color  string
	values []float64
}

// panel is one chart: its title, its series, and its y axis.
type panel struct {
	title  string
	series []series
	steps  bool                    // draw the values as steps (each holds until the next)
	y      func(v float64) float64 // the value's height in the plot, 0 to 1
	ticks  []float64
	label  func(v float64) string
	colors func(v float64) string // for steps: the colour of each level; nil for the series'
}

// picture draws four of the dashboard's panels from the samples, one per step: the
// rate limiter's available permits, the calls rejected in each step by layer, the
// breaker's state, and the p50 and p99 of the breaker's call durations in each step,
// estimated from the histogram's buckets as histogram_quantile does.
func picture(samples []sample) []byte {
	n := len(samples)
	permits := make([]float64, n)
	state := make([]float64, n)
	p50, p99 := make([]float64, n), make([]float64, n)
	layers := []string{"rateLimiter", "circuitBreaker", "bulkhead"}
	rejected := make([][]float64, len(layers))
	for i := range rejected {
		rejected[i] = make([]float64, n)
	}
	maxRejected := 0.0
	for k, s := range samples {
		permits[k] = float64(s.permits)
		state[k] = float64(slices.Index(stateLevels, s.state))
		for i, l := range layers {
			v := s.rejected[l]
			if k > 0 {
				v -= samples[k-1].rejected[l]
			}
			rejected[i][k] = float64(v)
			maxRejected = max(maxRejected, float64(v))
		}
		step := slices.Clone(s.buckets)
		if k > 0 && len(samples[k-1].buckets) == len(step) {
			for i := range step {
				step[i] -= samples[k-1].buckets[i]
			}
		}
		p50[k], p99[k] = math.NaN(), math.NaN()
		if v, ok := quantile(0.5, s.bounds, step); ok {
			p50[k] = v * 1000
		}
		if v, ok := quantile(0.99, s.bounds, step); ok {
			p99[k] = v * 1000
		}
	}
	rejTop := math.Max(5, math.Ceil(maxRejected/5)*5)
	linear := func(top float64) func(float64) float64 { return func(v float64) float64 { return v / top } }
	integer := func(v float64) string { return strconv.Itoa(int(v)) }

	panels := []panel{
		{
			title:  "Available permits (rate limiter)",
			series: []series{{"available permits", colGreen, permits}},
			y:      linear(10), ticks: []float64{0, 5, 10}, label: integer,
		},
		{
			title: "Rejected calls per step, by layer",
			series: []series{
				{layers[0], colYellow, rejected[0]},
				{layers[1], colRed, rejected[1]},
				{layers[2], colPurple, rejected[2]},
			},
			y: linear(rejTop), ticks: []float64{0, rejTop / 3, 2 * rejTop / 3, rejTop}, label: integer,
		},
		{
			title:  "Circuit breaker state",
			series: []series{{"state", colBlue, state}},
			steps:  true,
			y:      linear(2), ticks: []float64{0, 1, 2},
			label:  func(v float64) string { return stateLevels[int(v)] },
			colors: func(v float64) string { return []string{colGreen, colYellow, colRed}[int(v)] },
		},
		{
			title:  "Call duration through the breaker, per step",
			series: []series{{"p50", colBlue, p50}, {"p99", colOrange, p99}},
			y: func(v float64) float64 { // log scale, 1ms to 1s
				return math.Log10(math.Min(math.Max(v, 1), 1000)) / 3
			},
			ticks: []float64{1, 10, 100, 1000},
			label: func(v float64) string {
				if v >= 1000 {
					return strconv.Itoa(int(v/1000)) + " s"
				}
				return strconv.Itoa(int(v)) + " ms"
			},
		},
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Inter, Helvetica, Arial, sans-serif">`+"\n",
		picWidth, picHeight, picWidth, picHeight)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="%s"/>`+"\n", picWidth, picHeight, colBackground)
	text(&b, gap, 24, 15, colText, "start", "examples/observability: the scripted run, read after each step (one per second of the manual clock)")
	text(&b, gap, 44, 11, colMuted, "start", phases())
	for i, p := range panels {
		x := float64(gap + (i%2)*(panelW+gap))
		y := float64(header + gap + (i/2)*(panelH+gap))
		p.draw(&b, x, y, n)
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// stateLevels are the breaker's states that the picture draws, bottom to top.
var stateLevels = []string{"closed", "half_open", "open"}

// phases names the steps of the script, e.g. "0s burst · 1s steady · … · 3–5s open".
func phases() string {
	var parts []string
	for i := 0; i < len(script); {
		j := i
		for j+1 < len(script) && script[j+1].name == script[i].name {
			j++
		}
		at := strconv.Itoa(i) + "s"
		if j > i {
			at += "–" + strconv.Itoa(j) + "s"
		}
		parts = append(parts, at+" "+script[i].name)
		i = j + 1
	}
	return strings.Join(parts, " · ")
}

// draw draws the panel with its top-left corner at (x, y), for n steps.
func (p panel) draw(b *bytes.Buffer, x, y float64, n int) {
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%d" height="%d" rx="3" fill="%s" stroke="%s"/>`+"\n",
		x, y, panelW, panelH, colPanel, colBorder)
	text(b, x+10, y+20, 13, colText, "start", p.title)
	lx := x + padLeft
	for _, s := range p.series {
		if p.colors != nil {
			break // the levels' colours say it
		}
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="14" height="3" fill="%s"/>`+"\n", lx, y+33, s.color)
		text(b, lx+18, y+37, 11, colMuted, "start", s.name)
		lx += 30 + 6.5*float64(len(s.name))
	}

	x0, x1 := x+padLeft, x+panelW-padRight
	y0, y1 := y+padTop, y+panelH-padBottom
	px := func(k int) float64 { return x0 + (x1-x0)*float64(k)/float64(max(n-1, 1)) }
	py := func(v float64) float64 { return y1 - (y1-y0)*p.y(v) }
	for _, t := range p.ticks {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1"/>`+"\n", x0, py(t), x1, py(t), colGrid)
		text(b, x0-6, py(t)+4, 11, colMuted, "end", p.label(t))
	}
	for k := range n {
		text(b, px(k), y1+18, 11, colMuted, "middle", strconv.Itoa(k)+"s")
	}

	for _, s := range p.series {
		if p.steps {
			p.drawSteps(b, s, px, py)
			continue
		}
		var pts []string
		flush := func() {
			if len(pts) > 1 {
				fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), s.color)
			}
			pts = pts[:0]
		}
		for k, v := range s.values {
			if math.IsNaN(v) {
				flush()
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(k), py(v)))
		}
		flush()
		for k, v := range s.values {
			if !math.IsNaN(v) {
				fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", px(k), py(v), s.color)
			}
		}
	}
}

// drawSteps draws s as levels, each held from its step to the next, coloured by p.colors.
func (p panel) drawSteps(b *bytes.Buffer, s series, px func(int) float64, py func(float64) float64) {
	for k, v := range s.values {
		if math.IsNaN(v) || v < 0 {
			continue
		}
		end := k
		if k+1 < len(s.values) {
			end = k + 1
			next := s.values[k+1]
			if !math.IsNaN(next) && next >= 0 && next != v {
				fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1" stroke-dasharray="3 3"/>`+"\n",
					px(end), py(v), px(end), py(next), colMuted)
			}
		}
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="4"/>`+"\n",
			px(k), py(v), px(end), py(v), p.colors(v))
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", px(k), py(v), p.colors(v))
	}
}

// text writes s at (x, y), escaped.
func text(b *bytes.Buffer, x, y float64, size int, color, anchor, s string) {
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="%d" fill="%s" text-anchor="%s">`, x, y, size, color, anchor)
	_ = xml.EscapeText(b, []byte(s))
	b.WriteString("</text>\n")
}
