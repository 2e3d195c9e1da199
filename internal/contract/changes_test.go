package contract

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SPEC RC-3: a ConfigChanged event names the changed settings, sorted; none, nil.
func TestChanges_SortedNamesOfWhatDiffers(t *testing.T) {
	var c Changes
	c.Add(true, "period")
	c.Add(false, "maxWait")
	c.Add(true, "enabled")
	assert.Equal(t, []string{"enabled", "period"}, c.Sorted())
	var none Changes
	none.Add(false, "permits")
	assert.Nil(t, none.Sorted())
}

// testConfig is a configuration whose Validate fails when Bad is set.
type testConfig struct{ Bad bool }

func (c testConfig) Validate() error {
	if c.Bad {
		return errors.New("invalid")
	}
	return nil
}

// SPEC RC-3: Changed validates first, then compares: the error of an invalid c, else the
// comparison's error, else the names it adds, sorted.
func TestChanged_ValidatesThenCompares(t *testing.T) {
	compared := 0
	names := func(ch *Changes) error {
		compared++
		ch.Add(true, "period")
		ch.Add(true, "enabled")
		return nil
	}
	got, err := Changed(testConfig{}, names)
	require.NoError(t, err)
	assert.Equal(t, []string{"enabled", "period"}, got)

	_, err = Changed(testConfig{Bad: true}, names)
	require.EqualError(t, err, "invalid")
	assert.Equal(t, 1, compared, "an invalid c is not compared")

	notLive := errors.New("not live")
	got, err = Changed(testConfig{}, func(ch *Changes) error { ch.Add(true, "x"); return notLive })
	require.ErrorIs(t, err, notLive)
	assert.Nil(t, got)
}

// ErrOf keeps the error and drops the rest.
func TestErrOf(t *testing.T) {
	bad := errors.New("bad")
	assert.Same(t, bad, ErrOf(Changed(testConfig{}, func(*Changes) error { return bad })))
	assert.NoError(t, ErrOf([]string{"x"}, nil))
}
