package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const committedPicture = "../../docs/observability.svg"

// OB-6: docs/observability.svg is what `go run ./examples/observability -svg
// docs/observability.svg` draws now, byte for byte: a change to the script or to the
// drawing that was not drawn again fails here. The picture is well-formed XML, an svg of
// four panels.
func TestOB6_PictureIsCurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "observability.svg")
	_, out := playScript(t, config{svg: path})
	assert.Contains(t, out, "drew "+path+"\n")
	got, err := os.ReadFile(path)
	require.NoError(t, err)

	root, counts := parseSVG(t, got)
	assert.Equal(t, "svg", root)
	assert.Equal(t, 1+4, counts["rect"]-counts["legend"], "the background and four panels") // see parseSVG
	assert.Positive(t, counts["polyline"])

	want, err := os.ReadFile(committedPicture)
	require.NoError(t, err, "no docs/observability.svg: run go run ./examples/observability -svg docs/observability.svg")
	if !bytes.Equal(want, got) {
		t.Fatalf("docs/observability.svg is out of date: run go run ./examples/observability -svg docs/observability.svg from the repository's root")
	}
}

// The same script draws the same picture twice: nothing in it depends on the run (no
// timestamps, no port, no map order).
func TestPictureIsDeterministic(t *testing.T) {
	rep1, _ := playScript(t, config{})
	rep2, _ := playScript(t, config{})
	assert.Equal(t, picture(rep1.Samples), picture(rep2.Samples))
	require.Len(t, rep1.Samples, len(script))
	// What the panels show, step by step.
	var permits []int64
	var states []string
	for _, s := range rep1.Samples {
		permits = append(permits, s.permits)
		states = append(states, s.state)
	}
	assert.Equal(t, []int64{0, 7, 10, 10, 10, 10, 10, 7, 8, 6, 6, 10}, permits)
	assert.Equal(t, []string{"closed", "closed", "open", "open", "open", "open", "half_open", "closed", "closed", "closed", "closed", "closed"}, states)
	assert.Equal(t, map[string]int64{"rateLimiter": 15, "circuitBreaker": 22, "bulkhead": 1}, rep1.Samples[len(script)-1].rejected)
}

// parseSVG decodes the picture with encoding/xml and returns its root element's name
// and how many elements of each name it holds; "legend" counts the legend swatches
// (rects of height 3).
func parseSVG(t *testing.T, svg []byte) (string, map[string]int) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	counts := map[string]int{}
	root := ""
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if se, ok := tok.(xml.StartElement); ok {
			if root == "" {
				root = se.Name.Local
			}
			counts[se.Name.Local]++
			for _, a := range se.Attr {
				if se.Name.Local == "rect" && a.Name.Local == "height" && a.Value == "3" {
					counts["legend"]++
				}
			}
		}
	}
	return root, counts
}

// quantile estimates as Prometheus' histogram_quantile does.
func TestQuantileAsHistogramQuantile(t *testing.T) {
	bounds := []float64{0.1, 0.25, 0.5}
	// 4 observations in (0.1, 0.25]: the median is half way through that bucket.
	v, ok := quantile(0.5, bounds, []uint64{0, 4, 0, 0})
	require.True(t, ok)
	assert.InDelta(t, 0.175, v, 1e-12)
	// The first bucket starts at 0.
	v, _ = quantile(0.5, bounds, []uint64{10, 0, 0, 0})
	assert.InDelta(t, 0.05, v, 1e-12)
	// A rank in the +Inf bucket gives the highest finite bound.
	v, _ = quantile(0.99, bounds, []uint64{1, 0, 0, 9})
	assert.InDelta(t, 0.5, v, 1e-12)
	// The rank falls in the first bucket whose cumulative count reaches it.
	v, _ = quantile(0.5, bounds, []uint64{1, 1, 0, 0})
	assert.InDelta(t, 0.1, v, 1e-12)
	_, ok = quantile(0.5, bounds, []uint64{0, 0, 0, 0})
	assert.False(t, ok, "no observations, no quantile")
	assert.False(t, math.IsNaN(v))
}
