package kind

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// SPEC RC-3: a ConfigChanged event names the changed settings, sorted; none, nil.
func TestChanges_SortedNamesOfWhatDiffers(t *testing.T) {
	var c Changes
	c.Add(true, "period")
	c.Add(false, "maxWait")
	c.Add(true, "enabled")
	assert.Equal(t, []string{"enabled", "period"}, c.Sorted())
	var none Changes
	none.Add(false, "permits")
	assert.Nil(t, none.Sorted())
}
