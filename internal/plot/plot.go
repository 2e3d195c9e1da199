// Package plot draws the line charts of the documentation's simulations as SVG: the same
// input gives the same bytes, so that a test can keep a chart beside the simulation that
// makes it and fail when the two part.
package plot

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Point is one point of a series, in the chart's units.
type Point struct{ X, Y float64 }

// Series is one line of a chart. A series with Dashed set is drawn dashed: a bound or a
// reference rather than a measure. Color is a CSS colour; "" takes the palette's next.
type Series struct {
	Name   string
	Points []Point
	Dashed bool
	Color  string
}

// Chart is a line chart: a title, the axes' labels, and its series, drawn in their order
// in the palette's colours. The y axis starts at 0 and ends at the largest y, rounded up
// to a round number; the x axis spans the points' xs.
type Chart struct {
	Title  string
	XLabel string
	YLabel string
	Series []Series
}

// The chart's geometry, in SVG user units.
const (
	width   = 720
	height  = 360
	left    = 70
	right   = 200 // room for the legend
	top     = 40
	bottom  = 50
	ticks   = 5
	fontCSS = "font-family:Helvetica,Arial,sans-serif"
)

// palette holds the colours of the series that name none, in order; a chart with more
// such series reuses them.
var palette = []string{"#1f6fb4", "#d1495b", "#2a8a3e", "#edae49", "#6b6b6b", "#8e5ea2"}

// SVG returns the chart as an SVG document. A chart with no point draws its frame only.
func (c Chart) SVG() []byte {
	xmin, xmax, ymax := math.Inf(1), math.Inf(-1), 0.0
	for _, s := range c.Series {
		for _, p := range s.Points {
			xmin, xmax, ymax = min(xmin, p.X), max(xmax, p.X), max(ymax, p.Y)
		}
	}
	if xmin > xmax {
		xmin, xmax = 0, 1
	}
	if xmax == xmin {
		xmax = xmin + 1
	}
	ymax = roundUp(ymax)
	plotW, plotH := float64(width-left-right), float64(height-top-bottom)
	sx := func(x float64) float64 { return left + (x-xmin)/(xmax-xmin)*plotW }
	sy := func(y float64) float64 { return top + plotH - y/ymax*plotH }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">`+"\n",
		width, height, width, height, html.EscapeString(c.Title))
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="24" style="%s;font-size:15px;font-weight:bold">%s</text>`+"\n", left, fontCSS, html.EscapeString(c.Title))
	for i := 0; i <= ticks; i++ {
		y := ymax * float64(i) / ticks
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e3e3e3"/>`+"\n", left, sy(y), width-right, sy(y))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" style="%s;font-size:11px">%s</text>`+"\n", left-6, sy(y)+4, fontCSS, number(y))
	}
	for _, x := range xTicks(xmin, xmax) {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" style="%s;font-size:11px">%s</text>`+"\n", sx(x), height-bottom+16, fontCSS, number(x))
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="#9a9a9a"/>`+"\n", left, top, plotW, plotH)
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" style="%s;font-size:12px">%s</text>`+"\n", left+plotW/2, height-12, fontCSS, html.EscapeString(c.XLabel))
	fmt.Fprintf(&b, `<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle" style="%s;font-size:12px">%s</text>`+"\n", top+plotH/2, fontCSS, html.EscapeString(c.YLabel))
	next := 0
	for i, s := range c.Series {
		color := s.Color
		if color == "" {
			color = palette[next%len(palette)]
			next++
		}
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="6 4"`
		}
		if len(s.Points) > 0 {
			pts := make([]string, len(s.Points))
			for j, p := range s.Points {
				pts[j] = fmt.Sprintf("%.1f,%.1f", sx(p.X), sy(p.Y))
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`+"\n", color, dash, strings.Join(pts, " "))
		}
		ly := top + 10 + 20*i
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>`+"\n", width-right+14, ly, width-right+38, ly, color, dash)
		fmt.Fprintf(&b, `<text x="%d" y="%d" style="%s;font-size:12px">%s</text>`+"\n", width-right+44, ly+4, fontCSS, html.EscapeString(s.Name))
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// xTicks returns the x axis' ticks: the multiples of a round step from xmin to xmax,
// about ticks of them.
func xTicks(xmin, xmax float64) []float64 {
	step := roundStep(xmax - xmin)
	var out []float64
	for x := math.Ceil(xmin/step) * step; x <= xmax+step/1e9; x += step {
		out = append(out, math.Round(x/step)*step)
	}
	return out
}

// roundStep returns the step, 1, 2, 2.5 or 5 times a power of ten, that cuts span into
// the number of parts nearest ticks; 1 for a span ≤ 0.
func roundStep(span float64) float64 {
	if span <= 0 || math.IsNaN(span) || math.IsInf(span, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(span/ticks)))
	best := p
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if math.Abs(span/(m*p)-ticks) < math.Abs(span/best-ticks) {
			best = m * p
		}
	}
	return best
}

// roundUp returns the smallest of 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten
// that is ≥ v; 1 for v ≤ 0.
func roundUp(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// number formats a tick's value: no decimals for a whole number, else up to two.
func number(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}
