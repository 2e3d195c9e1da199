package resilience

import (
	"slices"

	"github.com/resilience4go/resilience4go/internal/contract"
)

// bindAttempts binds the layer of parts that starts a call's attempts (the retry or the
// hedge: its descriptor's BindAttempts), if any, to the gate of the composition's layer
// that limits them (LimitsAttempts), if any, so that it asks that gate before each
// attempt after the first. The registered instances are unchanged: the composition
// decorates its calls with the bound instance, which shares the instance's configuration,
// live changes and events; an instance shared by name among several compositions is
// bound in each to that composition's gate only.
func bindAttempts(parts []part) {
	i := slices.IndexFunc(parts, func(p part) bool { return !p.user && contract.CompositionOf(p.layer).BindAttempts != nil })
	j := slices.IndexFunc(parts, func(p part) bool { return !p.user && contract.CompositionOf(p.layer).LimitsAttempts != nil })
	if i < 0 || j < 0 {
		return
	}
	gate, ok := contract.CompositionOf(parts[j].layer).LimitsAttempts(parts[j].inst)
	if !ok {
		return
	}
	if bound, ok := contract.CompositionOf(parts[i].layer).BindAttempts(parts[i].inst, gate); ok {
		parts[i].inst = bound
	}
}
