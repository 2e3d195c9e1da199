package fallback_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/policy/fallback"
)

// The fallback's error lists are its own: changing the slice given to WithConfig after
// New, or the one Config returned, changes neither what it handles nor its Config
// (fault: they were its own backing arrays, and an ignored error was replaced).
func TestErrorListsAreTheFallbacksOwn(t *testing.T) {
	errA, errB := errors.New("a"), errors.New("b")
	base := fallback.Config{IgnoreOn: []error{errA}}
	f, err := fallback.New(func(context.Context, error) (int, error) { return 7, nil }, fallback.WithConfig(base))
	require.NoError(t, err)
	base.IgnoreOn[0] = errB
	c := f.Config()
	c.IgnoreOn[0] = errB
	assert.Equal(t, []error{errA}, f.Config().IgnoreOn)
	assert.False(t, f.Handles(errA))
	v, err := fallback.DecorateFunc(f, func(context.Context, int) (int, error) { return 0, errA })(context.Background(), 0)
	assert.ErrorIs(t, err, errA, "errA is still ignored")
	assert.Zero(t, v)
	assert.True(t, f.Handles(errB))
}
