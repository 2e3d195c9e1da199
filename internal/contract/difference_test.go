package contract

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Clip keeps a string of at most n bytes whole, and cuts a longer one between
// characters, never inside one.
func TestClip(t *testing.T) {
	assert.Equal(t, "abc", Clip("abc", 3))
	assert.Equal(t, "ab", Clip("abc", 2))
	assert.Equal(t, "a", Clip("aé", 2), "é is two bytes: the cut moves before it")
	assert.Equal(t, "aé", Clip("aéb", 3))
	assert.Equal(t, "", Clip("é", 1))
	assert.Equal(t, "", Clip("abc", 0))
}
