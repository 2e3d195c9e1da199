package contract

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

// Changed checks c as a new configuration of a running instance and returns the
// attribute names of the settings it changes, sorted (nil when none): c's Validate error
// (its *policy.ConfigError) for an invalid c; else compare's error, the R4C-REG-012 of a
// setting that cannot change on a running instance; else the names compare adds.
func Changed[C interface{ Validate() error }](c C, compare func(changes *Changes) error) ([]string, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var changes Changes
	if err := compare(&changes); err != nil {
		return nil, err
	}
	return changes.Sorted(), nil
}

// ErrOf returns the error of a check that also returns what it found, for a caller that
// wants only the error: ErrOf(changes(old, c)).
func ErrOf[T any](_ T, err error) error { return err }
