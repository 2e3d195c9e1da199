package resilienceotel

import (
	"slices"
	"strings"

	"github.com/resilience4go/resilience4go/internal/kind"
)

// breakerStates are the states of every transition a registered kind counts
// (kind.Transitions.States), as the attributes state, from and to name them: a span
// event's from and to name them the same way (snakeState).
var breakerStates = transitionStates()

func transitionStates() []string {
	var states []string
	for _, k := range kind.All() {
		if m := k.Measures(); m != nil && m.Transitions != nil {
			for _, s := range m.Transitions.States {
				if !slices.Contains(states, s) {
					states = append(states, s)
				}
			}
		}
	}
	return states
}

// breakerState returns the index in breakerStates of the state an event names name (its
// name in kebab-case, e.g. half-open); false for an unknown name.
func breakerState(name string) (int, bool) {
	i := slices.Index(breakerStates, strings.ReplaceAll(name, "-", "_"))
	return i, i >= 0
}
