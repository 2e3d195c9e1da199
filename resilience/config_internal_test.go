package resilience

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// levenshtein is the plain quadratic edit distance, the reference for editDistance.
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// The bounded edit distance is exact up to its limit and above the limit beyond it
// (fault: the distance was computed whole, in time quadratic in the key's length).
func TestEditDistance_ExactUpToTheLimit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = "abc."[rng.IntN(4)]
		}
		return string(b)
	}
	for range 20_000 {
		a, b, limit := word(), word(), rng.IntN(12)
		want, got := levenshtein(a, b), editDistance(a, b, limit)
		if want <= limit {
			require.Equal(t, want, got, "%q %q limit %d", a, b, limit)
		} else {
			require.Greater(t, got, limit, "%q %q limit %d", a, b, limit)
		}
	}
	assert.Equal(t, 0, editDistance("", "", 0))
	assert.Equal(t, 3, editDistance("", "abc", 3))
	assert.Equal(t, 4, editDistance("", "abcd", 3))
}

// No suggestion is looked for past maxSuggestLen, and none is farther than
// maxEditDistance.
func TestClosestKey_Bounds(t *testing.T) {
	assert.Empty(t, closestKey("instances."+strings.Repeat("x", maxSuggestLen)+".rateLimiter.permit"))
	assert.NotEmpty(t, closestKey("instances."+strings.Repeat("x", maxSuggestLen-40)+".rateLimiter.permit"))
	assert.Empty(t, closestKey(strings.Repeat("q", 100)), "nothing is near")
}
