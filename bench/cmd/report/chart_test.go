package main

import (
	"fmt"
	"html"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// chartReport returns a report with a figure for every subject the chart draws, in both
// modes.
func chartReport(t *testing.T) *report {
	t.Helper()
	var raw strings.Builder
	raw.WriteString("cpu: test\n")
	for _, c := range comparisons {
		subjects := append([]subject{c.ours}, c.peers...)
		if c.ref != nil {
			subjects = append(subjects, *c.ref)
		}
		for i, s := range subjects {
			fmt.Fprintf(&raw, "Benchmark%s 100 %d ns/op\n", s.bench, 10+i)
			fmt.Fprintf(&raw, "Benchmark%s-2 100 %d ns/op\n", parallelName(s.bench), 20+i)
		}
	}
	res, err := parseBench(strings.NewReader(raw.String()))
	if err != nil {
		t.Fatal(err)
	}
	return &report{res: res, modes: []mode{{procs: 1}, {parallel: true, procs: 2}}}
}

// The row labels are right-aligned at a margin wide enough for each of them, by a
// per-character estimate of its width at the labels' font size (fault: the margin was
// 300 pixels whatever the labels, and "resilience4go Keyed.TryAcquire, 100k live keys"
// was cut at the chart's left edge); the bars start after the margin.
func TestChart_LabelsFitTheirMargin(t *testing.T) {
	svg := drawChart(chartReport(t))
	labels := regexp.MustCompile(`<text x="(\d+)" y="\d+" text-anchor="end" font-weight="\w+">([^<]*)</text>`).FindAllStringSubmatch(svg, -1)
	if len(labels) == 0 {
		t.Fatal("no row labels in the chart")
	}
	bars := regexp.MustCompile(`<rect x="(\d+)" y="\d+" width="[\d.]+" height="\d+" fill="#[0-9a-f]+"><title>`).FindAllStringSubmatch(svg, -1)
	if len(bars) == 0 {
		t.Fatal("no bars in the chart")
	}
	barLeft, _ := strconv.Atoi(bars[0][1])
	for _, m := range labels {
		right, _ := strconv.Atoi(m[1])
		label := html.UnescapeString(m[2])
		if left := float64(right) - textWidth(label, labelSize); left < labelLeft {
			t.Errorf("%q, %.0f pixels wide, starts at x=%.0f, left of the margin at %d", label, textWidth(label, labelSize), left, labelLeft)
		}
		if right >= barLeft {
			t.Errorf("%q ends at x=%d, on the bars at %d", label, right, barLeft)
		}
	}
	width := regexp.MustCompile(`<svg [^>]*width="(\d+)"`).FindStringSubmatch(svg)
	if w, _ := strconv.Atoi(width[1]); w < barLeft+barMax {
		t.Errorf("the chart is %d pixels wide, narrower than its bars (%d to %d)", w, barLeft, barLeft+barMax)
	}
}

// The estimate is of the widest weight, and a wider character counts more.
func TestTextWidth(t *testing.T) {
	if w := textWidth("", labelSize); w != 0 {
		t.Errorf("the empty label is %v pixels wide", w)
	}
	if a, b := textWidth("iiii", labelSize), textWidth("MMMM", labelSize); a >= b {
		t.Errorf("iiii (%v) is not narrower than MMMM (%v)", a, b)
	}
	// Helvetica Bold's "resilience4go" is 76.7 pixels at 12 pixels; the estimate leaves room
	// for a wider fallback font.
	if w := textWidth("resilience4go", 12); w < 76.7 || w > 76.7*1.3 {
		t.Errorf("resilience4go is estimated %v pixels wide", w)
	}
}
