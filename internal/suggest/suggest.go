// Package suggest finds the valid name nearest to a misspelt one, for the "did you mean"
// of an error message.
package suggest

import "strings"

// Distance is the Levenshtein distance between a and b, in bytes, when it is at most
// limit; otherwise it is some number above limit. Only the cells within limit of the
// diagonal are computed: the work is (2·limit+1)·len(a).
func Distance(a, b string, limit int) int {
	if len(a)-len(b) > limit || len(b)-len(a) > limit {
		return limit + 1
	}
	far := limit + 1 // stands for every distance above limit
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = min(j, far)
	}
	for i := 1; i <= len(a); i++ {
		lo, hi := max(1, i-limit), min(len(b), i+limit)
		cur[0] = min(i, far)
		if lo > 1 {
			cur[lo-1] = far // left of the band
		}
		rowMin := cur[0]
		for j := lo; j <= hi; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			up := far // above the band of the previous row
			if j < i+limit {
				up = prev[j]
			}
			cur[j] = min(up+1, cur[j-1]+1, prev[j-1]+cost, far)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin >= far {
			return far // every path to the end passes through this row
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Closest returns the candidate nearest to word by edit distance, ignoring case, when it
// is at most limit edits away; "" when none is. A candidate that contains word, ignoring
// case (a truncated name), or that differs from it only in case, comes first; of equally
// near ones, the first in candidates wins. The work is linear in the total length of the
// candidates, times 2·limit+1.
func Closest(word string, candidates []string, limit int) string {
	lower := strings.ToLower(word)
	best, bestScore := "", -1
	for _, c := range candidates {
		lc := strings.ToLower(c)
		score := Distance(lower, lc, limit)
		if score > limit {
			continue
		}
		if lower == "" || !strings.Contains(lc, lower) {
			score += 1 << 16
		}
		if bestScore < 0 || score < bestScore {
			best, bestScore = c, score
		}
	}
	return best
}
