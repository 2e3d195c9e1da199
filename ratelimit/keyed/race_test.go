//go:build race

package keyed_test

// raceEnabled reports whether the tests run under the race detector, which checks every
// atomic access: the largest floods are cut to a tenth then.
const raceEnabled = true
