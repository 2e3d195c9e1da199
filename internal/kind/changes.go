package kind

import "slices"

// Changes collects the configuration attribute names of the settings that a new
// configuration of a running instance changes, for its ConfigChanged event.
type Changes []string

// Add adds name when differ is true.
func (c *Changes) Add(differ bool, name string) {
	if differ {
		*c = append(*c, name)
	}
}

// Sorted returns the names added, sorted; nil when none was.
func (c Changes) Sorted() []string {
	slices.Sort(c)
	return c
}
