// Package hidden is under internal/: not counted.
package hidden

// H is not counted.
func H() {}
