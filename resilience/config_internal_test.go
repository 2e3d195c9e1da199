package resilience

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// No suggestion is looked for past maxSuggestLen, and none is farther than
// maxEditDistance.
func TestClosestKey_Bounds(t *testing.T) {
	assert.Empty(t, closestKey("instances."+strings.Repeat("x", maxSuggestLen)+".rateLimiter.permit"))
	assert.NotEmpty(t, closestKey("instances."+strings.Repeat("x", maxSuggestLen-40)+".rateLimiter.permit"))
	assert.Empty(t, closestKey(strings.Repeat("q", 100)), "nothing is near")
}

// The line splitter of LoadProperties searches each byte of a line once, however the
// reader cuts it: fed a long line a byte at a time, as bufio.Scanner feeds it (the data
// from the token's start, one byte more each time), it records after each call without a
// line that it has searched all the data, so that the next call starts there; and it
// still finds each terminator, a "\r\n" split across two reads included.
func TestLineScannerSearchesEachByteOnce(t *testing.T) {
	text := []byte(strings.Repeat("x", 5000) + "\r\n" + strings.Repeat("y", 300) + "\r" + "z\n")
	var s lineScanner
	var lines []string
	start, end := 0, 1
	for start < len(text) {
		data := text[start:end]
		advance, line, err := s.split(data, end == len(text))
		require.NoError(t, err)
		if advance == 0 {
			require.Equal(t, len(data), s.searched, "the next search starts where this one ended")
			end++
			continue
		}
		assert.Zero(t, s.searched, "a line found: the next one is searched from its start")
		lines = append(lines, string(line))
		start += advance
		end = max(end, start+1)
	}
	assert.Equal(t, []string{strings.Repeat("x", 5000), strings.Repeat("y", 300), "z"}, lines)
}
