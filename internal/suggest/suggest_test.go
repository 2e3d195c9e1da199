package suggest

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// levenshtein is the plain quadratic edit distance, the reference for Distance.
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
func TestDistance_ExactUpToTheLimit(t *testing.T) {
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
		want, got := levenshtein(a, b), Distance(a, b, limit)
		if want <= limit {
			require.Equal(t, want, got, "%q %q limit %d", a, b, limit)
		} else {
			require.Greater(t, got, limit, "%q %q limit %d", a, b, limit)
		}
	}
	assert.Equal(t, 0, Distance("", "", 0))
	assert.Equal(t, 3, Distance("", "abc", 3))
	assert.Equal(t, 4, Distance("", "abcd", 3))
}

// Closest prefers a candidate that contains the word, ignores case, and finds nothing
// beyond the limit.
func TestClosest(t *testing.T) {
	cands := []string{"permits", "period", "maxWait", "enabled"}
	assert.Equal(t, "permits", Closest("permit", cands, 3))
	assert.Equal(t, "maxWait", Closest("maxwait", cands, 3))
	assert.Equal(t, "period", Closest("perod", cands, 3))
	assert.Equal(t, "maxWait", Closest("wait", cands, 5), "a truncated name comes first")
	assert.Empty(t, Closest("qqqqqqqqqq", cands, 3))
	assert.Empty(t, Closest("x", nil, 3))
}
