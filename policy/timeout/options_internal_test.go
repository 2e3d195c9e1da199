package timeout

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/r4c"
)

func TestDescriptor(t *testing.T) {
	contracttest.RequireDescriptor(t, descriptor, Layer, "timeout", []string{"duration", "enabled"},
		settings{Config: DefaultConfig()})
}

func TestSetAttributes(t *testing.T) {
	table := descriptor.Table()
	s := defaults()
	require.NoError(t, table.Set(&s, "duration", "250ms"))
	require.NoError(t, table.Set(&s, "enabled", "FALSE"))
	assert.Equal(t, Config{Duration: 250 * time.Millisecond, Disabled: true}, s.Config)

	contracttest.RequireRefused(t, descriptor, &s, []contracttest.BadValue{
		{Attr: "duration", Value: "10 parsecs", Code: r4c.BadDuration},
		{Attr: "enabled", Value: "maybe", Code: r4c.BadBoolean},
		{Attr: "maxWait", Value: "1s", Code: r4c.UnknownKey},
	})

	// A negative duration parses; Validate rejects it.
	require.NoError(t, table.Set(&s, "duration", "-1s"))
	assert.Equal(t, r4c.NegativeDuration, r4c.CodeOf(s.Config.Validate()))
	_, err := build(s)
	assert.Equal(t, r4c.NegativeDuration, r4c.CodeOf(err))
	require.NoError(t, table.Set(&s, "enabled", "true"))
	assert.False(t, s.Disabled)
}

// Options in code and configuration keys land on the same Config (SPEC RG-4).
func TestOptionsAndKeysAgree(t *testing.T) {
	s := defaults()
	s.Duration = time.Second
	contract.Apply(&s, []Option{Enabled(false), nil})

	k := defaults()
	table := descriptor.Table()
	require.NoError(t, table.Set(&k, "duration", "1s"))
	require.NoError(t, table.Set(&k, "enabled", "false"))
	assert.True(t, reflect.DeepEqual(s.Config, k.Config))

	s2 := defaults()
	contract.Apply(&s2, []Option{Duration(time.Second), Enabled(false)})
	assert.True(t, reflect.DeepEqual(s.Config, s2.Config))

	to, err := New(time.Second, Enabled(false))
	require.NoError(t, err)
	assert.True(t, reflect.DeepEqual(s.Config, to.Config()), "New builds what the options set")
}
