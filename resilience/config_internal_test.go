package resilience

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// No suggestion is looked for past maxSuggestLen, and none is farther than
// maxEditDistance.
func TestClosestKey_Bounds(t *testing.T) {
	assert.Empty(t, closestKey("instances."+strings.Repeat("x", maxSuggestLen)+".rateLimiter.permit"))
	assert.NotEmpty(t, closestKey("instances."+strings.Repeat("x", maxSuggestLen-40)+".rateLimiter.permit"))
	assert.Empty(t, closestKey(strings.Repeat("q", 100)), "nothing is near")
}
