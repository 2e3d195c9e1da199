package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// The chart's geometry, in SVG user units (pixels). The row labels end at labelRight,
// right-aligned, and start at labelLeft at the least: labelRight is worked out from the
// longest label (see chartGeometry), and the bars start labelGap after it.
const (
	labelLeft  = 16 // the left margin, as the titles'
	labelGap   = 10 // between a label's end and the bars
	labelSize  = 12 // the labels' font size
	valueRoom  = 140
	barMax     = 470 // the longest bar of a panel
	barHeight  = 11
	barGap     = 2
	rowGap     = 9
	panelTitle = 30
	panelGap   = 16
	top        = 100
)

// helveticaBold holds the advance widths of Helvetica Bold (and of Arial Bold, which has
// the same metrics), in thousandths of an em, of the printable ASCII characters from ' ':
// the chart's first font, in the weight of its widest labels (ours, in bold); the regular
// weight is narrower, character by character.
var helveticaBold = [95]int{
	278, 333, 474, 556, 556, 889, 722, 278, 333, 333, 389, 584, 278, 333, 278, 278, // ' ' to '/'
	556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 333, 333, 584, 584, 584, 611, // '0' to '?'
	975, 722, 722, 722, 722, 667, 611, 778, 722, 278, 556, 722, 611, 833, 722, 778, // '@' to 'O'
	667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333, 278, 333, 584, 556, // 'P' to '_'
	333, 556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556, 278, 889, 611, 611, // '`' to 'o'
	611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389, 280, 389, 584, // 'p' to '~'
}

// fallbackSlack is how much wider than Helvetica Bold a label may be drawn, in percent:
// room for a fallback sans-serif font where neither Helvetica nor Arial (nor a font with
// their metrics, such as Liberation Sans) is installed; DejaVu Sans Bold, the widest
// common one, is up to a quarter wider.
const fallbackSlack = 25

// textWidth estimates the width of s drawn in bold at size px: Helvetica Bold's widths,
// plus fallbackSlack percent; an em for a character outside printable ASCII.
func textWidth(s string, size float64) float64 {
	w := 0
	for _, r := range s {
		if r >= ' ' && r <= '~' {
			w += helveticaBold[r-' ']
		} else {
			w += 1000
		}
	}
	return float64(w) * size / 1000 * (100 + fallbackSlack) / 100
}

// chartGeometry returns where the labels end, where the bars start and the chart's
// width, for rows labelled labels: the labels end far enough from labelLeft for the
// longest of them.
func chartGeometry(labels []string) (labelRight, barLeft, width int) {
	longest := 0.0
	for _, l := range labels {
		longest = max(longest, textWidth(l, labelSize))
	}
	labelRight = labelLeft + int(math.Ceil(longest))
	barLeft = labelRight + labelGap
	return labelRight, barLeft, barLeft + barMax + valueRoom
}

// Bar colours: ours, the peers, the reference; serial dark, parallel light.
var palette = map[string][2]string{
	"ours":      {"#1f6fb4", "#9cc4e8"},
	"peer":      {"#6b6b6b", "#c4c4c4"},
	"reference": {"#2a8a3e", "#a6d8b0"},
}

// drawChart draws one panel per comparison: for each call, a bar for its serial ns/op and
// one for its parallel ns/op, on a linear scale of the panel's own (the panels' costs
// differ by two orders of magnitude), each labelled with its value.
func drawChart(r *report) string {
	type row struct {
		label string
		class string
		ns    [2]float64
		ok    [2]bool
	}
	type panel struct {
		title string
		rows  []row
		max   float64
	}
	var panels []panel
	for _, c := range comparisons {
		p := panel{title: c.title}
		subjects := append([]subject{c.ours}, c.peers...)
		if c.ref != nil {
			subjects = append(subjects, *c.ref)
		}
		for i, s := range subjects {
			rw := row{label: s.label(), class: "peer"}
			if i == 0 {
				rw.class = "ours"
			} else if c.ref != nil && s == *c.ref {
				rw.class = "reference"
			}
			for j, m := range r.modes {
				f := r.res.figures(s, m)
				rw.ns[j], rw.ok[j] = f.ns, f.ok
				if f.ok {
					p.max = max(p.max, f.ns)
				}
			}
			p.rows = append(p.rows, rw)
		}
		panels = append(panels, p)
	}

	var labels []string
	for _, p := range panels {
		for _, rw := range p.rows {
			labels = append(labels, rw.label)
		}
	}
	labelRight, barLeft, chartWidth := chartGeometry(labels)

	rowHeight := 2*barHeight + barGap + rowGap
	height := top
	for _, p := range panels {
		height += panelTitle + len(p.rows)*rowHeight + panelGap
	}
	height += 20

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="%d">`+"\n",
		chartWidth, height, chartWidth, height, labelSize)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", chartWidth, height)
	fmt.Fprintf(&b, `<text x="16" y="26" font-size="16" font-weight="bold">resilience4go against the Go peers: ns per call, median of %d runs (lower is better)</text>`+"\n", r.count())
	fmt.Fprintf(&b, `<text x="16" y="46" fill="#444">%s · %s · each panel has its own linear scale</text>`+"\n",
		esc(r.env.cpuModel), esc(r.env.goVersion))
	// Legend: one line per mode.
	for j, m := range r.modes {
		ly := 58 + j*18
		fmt.Fprintf(&b, `<text x="16" y="%d" fill="#444">%s:</text>`+"\n", ly+10, esc(m.String()))
		lx := 190
		for _, item := range []struct{ class, text string }{{"ours", "resilience4go"}, {"peer", "peers"}, {"reference", "reference: the floor (a clock read, plus a CAS when admitted)"}} {
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/>`, lx, ly, palette[item.class][j])
			fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", lx+16, ly+10, esc(item.text))
			lx += 30 + 7*len(item.text)
		}
	}

	y := top
	for _, p := range panels {
		fmt.Fprintf(&b, `<text x="16" y="%d" font-size="13" font-weight="bold">%s</text>`+"\n", y+18, esc(p.title))
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/>`+"\n",
			barLeft, y+panelTitle-4, barLeft, y+panelTitle+len(p.rows)*rowHeight-rowGap+4)
		y += panelTitle
		for _, rw := range p.rows {
			weight := "normal"
			if rw.class == "ours" {
				weight = "bold"
			}
			fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" font-weight="%s">%s</text>`+"\n",
				labelRight, y+barHeight+barGap/2+4, weight, esc(rw.label))
			for j := range r.modes {
				by := y + j*(barHeight+barGap)
				if !rw.ok[j] {
					fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#999">not measured</text>`+"\n", barLeft+4, by+barHeight-1)
					continue
				}
				w := 0.0
				if p.max > 0 {
					w = rw.ns[j] / p.max * barMax
				}
				fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s, %s: %s ns/op</title></rect>`+"\n",
					barLeft, by, max(w, 1), barHeight, palette[rw.class][j], esc(rw.label), esc(r.modes[j].String()), num(rw.ns[j]))
				fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="11" fill="#222">%s ns</text>`+"\n",
					float64(barLeft)+max(w, 1)+5, by+barHeight-1, num(rw.ns[j]))
			}
			y += rowHeight
		}
		y += panelGap
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func esc(s string) string { return html.EscapeString(s) }
