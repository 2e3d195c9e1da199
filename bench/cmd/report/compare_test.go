package main

import (
	"math"
	"strings"
	"testing"
)

// A contended target that ours misses says whether the floor of a limiter with no lock, a
// clock read and a compare-and-swap retried until it wins, meets it.
func TestFloorNote(t *testing.T) {
	for _, c := range []struct {
		ratio, limit float64
		want         string
	}{
		{1.39, 2, "misses it too, at 1.39× faster"},
		{2.5, 2, "is at 2.50× faster than x, which meets it"},
		{2.65, -2, "misses it too, at 2.65× x"},
		{1.5, -2, "is at 1.50× x, which meets it"},
	} {
		got := floorNote(c.ratio, c.limit, map[bool]string{true: "faster than x", false: "x"}[c.limit > 0])
		if !strings.Contains(got, c.want) {
			t.Errorf("floorNote(%v, %v) = %q, want it to contain %q", c.ratio, c.limit, got, c.want)
		}
	}
	if got := floorNote(math.NaN(), 2, "x"); got != "" {
		t.Errorf("floorNote(NaN) = %q, want nothing", got)
	}
}
