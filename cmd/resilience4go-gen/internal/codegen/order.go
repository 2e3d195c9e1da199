package codegen

import (
	"slices"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
)

// layerOrder is the order the specs are written in: the default order of the layers,
// outermost first (the ranks of the registered descriptors), then the order.
var layerOrder = append(contract.Ranked(), "")

// composed returns the layers of specs in the order they compose, outermost first: those
// whose policy is always outermost (the fallback), then those an order names, then the
// others in the default order.
func composed(specs []*spec) []policy.Layer {
	var named []policy.Layer
	var have []policy.Layer
	for _, s := range specs {
		if s.def.layer == "" {
			named = s.order
		} else {
			have = append(have, s.def.layer)
		}
	}
	outermost := func(l policy.Layer) bool {
		d, ok := defOf(l)
		return ok && d.comp.Outermost
	}
	var out []policy.Layer
	for _, l := range layerOrder {
		if outermost(l) && slices.Contains(have, l) {
			out = append(out, l)
		}
	}
	for _, l := range named {
		if !outermost(l) && slices.Contains(have, l) && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	for _, l := range layerOrder {
		if l != "" && slices.Contains(have, l) && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// ordered returns specs in the default order of their layers.
func (g *generator) ordered(specs []*spec) []*spec {
	out := slices.Clone(specs)
	slices.SortStableFunc(out, func(a, b *spec) int {
		return slices.Index(layerOrder, a.def.layer) - slices.Index(layerOrder, b.def.layer)
	})
	return out
}
