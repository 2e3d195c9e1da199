package hedge_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/hedge"
)

// The hedge's error lists are its own: changing the slice given to WithConfig after New,
// or the one Config or Snapshot returned, changes neither (what it hedges on is decided by
// the lists Config returns a copy of).
func TestErrorListsAreTheHedgesOwn(t *testing.T) {
	errA, errB := errors.New("a"), errors.New("b")
	base := hedge.DefaultConfig()
	base.HedgeOn, base.AbortOn = []error{errA}, []error{errB}
	h, err := hedge.New(hedge.WithClock(clock.NewManual()), hedge.WithConfig(base))
	require.NoError(t, err)
	base.HedgeOn[0], base.AbortOn[0] = errB, errA
	c := h.Config()
	c.HedgeOn[0], c.AbortOn[0] = errB, errA
	s := h.Snapshot()
	assert.Equal(t, []error{errA}, s.HedgeOn)
	assert.Equal(t, []error{errB}, s.AbortOn)
	s.HedgeOn[0], s.AbortOn[0] = errB, errA
	assert.Equal(t, []error{errA}, h.Config().HedgeOn)
	assert.Equal(t, []error{errB}, h.Config().AbortOn)
	assert.Equal(t, []error{errA}, h.Snapshot().HedgeOn)
	assert.Equal(t, []error{errB}, h.Snapshot().AbortOn)
}
