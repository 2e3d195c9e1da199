package contracttest

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Calls start pending, are listed in the order they started, and complete with "done"
// and the error given, once; Future returns the future Next returned.
func TestCalls(t *testing.T) {
	c := NewCalls()
	assert.Nil(t, c.Started())
	assert.Nil(t, c.Future(1), "not started")

	f2 := c.Next(context.Background(), 2)
	f1 := c.Next(context.Background(), 1)
	assert.Equal(t, []int{2, 1}, c.Started())
	assert.Same(t, f2, c.Future(2))
	assert.Same(t, f1, c.Future(1))
	_, done, _ := f1.Result()
	assert.False(t, done, "pending until finished")

	c.Finish(1)
	v, done, err := f1.Result()
	require.True(t, done)
	require.NoError(t, err)
	assert.Equal(t, "done", v)

	boom := errors.New("boom")
	c.FinishWith(2, boom)
	c.Finish(2) // a second completion does nothing
	v, done, err = f2.Result()
	require.True(t, done)
	assert.Same(t, boom, err)
	assert.Equal(t, "done", v)
	assert.Panics(t, func() { c.Finish(3) }, "call 3 never started")
}
