package contract_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/contract"
)

type conventionalInstance struct {
	id   string
	size int
}

// Conventional fills in Common, Build, Validate, ID and Of from functions of the
// policy's own types; Typed makes a State of one; the fields set in the literal stay.
func TestConventional(t *testing.T) {
	errSmall := errors.New("too small")
	validate := func(s *testPolicySettings) error {
		if s.Size < 1 {
			return errSmall
		}
		return nil
	}
	build := func(s testPolicySettings) (*conventionalInstance, error) {
		return &conventionalInstance{id: s.ID("conv"), size: s.Size}, nil
	}
	d := contract.Conventional(&contract.Descriptor[testPolicySettings]{
		Config: func(s *testPolicySettings) any { return s.Size },
		State:  contract.Typed(func(c *conventionalInstance) int { return c.size * 2 }),
	}, build, validate,
		func(c *conventionalInstance) string { return c.id },
		func(c *conventionalInstance) int { return c.size })

	s := testPolicySettings{Size: 3}
	assert.Same(t, &s.Common, d.Common(&s))
	assert.Equal(t, 3, d.Config(&s))
	assert.NoError(t, d.Validate(&s))
	assert.ErrorIs(t, d.Validate(&testPolicySettings{}), errSmall)

	s.Name = "shared"
	p, err := d.Build(s)
	require.NoError(t, err)
	id, ok := d.IDOf(p)
	assert.True(t, ok)
	assert.Equal(t, "shared", id)
	assert.Equal(t, 3, d.Of(p))
	assert.Equal(t, 6, d.Snapshot(p))
	assert.Panics(t, func() { d.Of(&cacheInstance{}) }, "an instance of another type")
}
