package resilience

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
)

// The layer table and the descriptors agree: every layer of the default order has one
// row, and no row is of another layer; a layer has no sync decorator exactly when its
// descriptor says it guards only calls returning a future, with the code that refuses it.
func TestLayerTable_AgreesWithDescriptors(t *testing.T) {
	rows := layerTable[struct{}, struct{}]()
	order := DefaultOrder()
	require.Len(t, rows, len(order))
	for _, l := range order {
		var found []layerRow[struct{}, struct{}]
		for _, r := range rows {
			if r.layer == l {
				found = append(found, r)
			}
		}
		require.Len(t, found, 1, "the rows of layer %s", l)
		c := contract.CompositionOf(l)
		assert.Equal(t, found[0].sync == nil, c.AsyncOnly != "", "layer %s: no sync decorator iff async only", l)
		assert.NotNil(t, found[0].async, "layer %s has an async decorator", l)
		err := asyncOnly("Svc.Call", l)
		if c.AsyncOnly == "" {
			assert.NoError(t, err, l)
			continue
		}
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, c.AsyncOnly, ce.Code, l)
		assert.Equal(t, string(l), ce.Key)
	}
}

// The default order is written once, in the ranks of the descriptors: outermost layers
// first, and a layer that replaces another right after it, each with a place of its own.
func TestDefaultOrder_FromRanks(t *testing.T) {
	order := DefaultOrder()
	seen := map[int]policy.Layer{}
	for i, l := range order {
		c := contract.CompositionOf(l)
		require.NotZero(t, c.Rank, l)
		prev, dup := seen[c.Rank]
		require.False(t, dup, "%s and %s share rank %d", l, prev, c.Rank)
		seen[c.Rank] = l
		if c.Outermost {
			for _, outer := range order[:i] {
				assert.True(t, contract.CompositionOf(outer).Outermost, "%s is outside the outermost layer %s", outer, l)
			}
		}
		if r := c.Role; r.Name != "" && r.Code != "" {
			other := order[i-1]
			assert.Equal(t, r.Name, contract.CompositionOf(other).Role.Name, "%s takes the place of %s, next out in the order", l, other)
		}
	}
}
