package main

import (
	"fmt"
	"html"
	"strings"
)

// The chart's geometry, in SVG user units (pixels).
const (
	chartWidth = 920
	labelRight = 300 // labels end here, right-aligned
	barLeft    = 310
	barMax     = 470 // the longest bar of a panel
	barHeight  = 11
	barGap     = 2
	rowGap     = 9
	panelTitle = 30
	panelGap   = 16
	top        = 100
)

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

	rowHeight := 2*barHeight + barGap + rowGap
	height := top
	for _, p := range panels {
		height += panelTitle + len(p.rows)*rowHeight + panelGap
	}
	height += 20

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n",
		chartWidth, height, chartWidth, height)
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
