package bulkhead

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
	contracttest.RequireDescriptor(t, descriptor, Layer, "bulkhead", []string{"maxConcurrent", "maxWait", "priorityReserve", "enabled", "shadow"},
		settings{Config: DefaultConfig()})
}

func TestSetAttributes(t *testing.T) {
	table := descriptor.Table()
	s := defaults()
	require.NoError(t, table.Set(&s, "maxConcurrent", " 10 "))
	require.NoError(t, table.Set(&s, "maxWait", "250ms"))
	require.NoError(t, table.Set(&s, "enabled", "false"))
	assert.Equal(t, Config{MaxConcurrent: 10, MaxWait: 250 * time.Millisecond, PriorityReserve: 0.5, Disabled: true}, s.Config)

	contracttest.RequireRefused(t, descriptor, &s, []contracttest.BadValue{
		{Attr: "maxConcurrent", Value: "ten", Code: r4c.BadNumber},
		{Attr: "maxWait", Value: "10 parsecs", Code: r4c.BadDuration},
		{Attr: "enabled", Value: "yes please", Code: r4c.BadBoolean},
		{Attr: "permits", Value: "1", Code: r4c.UnknownKey},
	})

	require.NoError(t, table.Set(&s, "maxConcurrent", "0"))
	assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(s.Config.Validate()))
	_, err := build(s)
	assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(err))
	require.NoError(t, table.Set(&s, "maxConcurrent", "1"))
	require.NoError(t, table.Set(&s, "maxWait", "-1s"))
	assert.Equal(t, r4c.NegativeDuration, r4c.CodeOf(s.Config.Validate()))
	require.NoError(t, table.Set(&s, "enabled", "TRUE"))
	assert.False(t, s.Disabled)
}

// Options in code and configuration keys land on the same Config (SPEC RG-4).
func TestOptionsAndKeysAgree(t *testing.T) {
	s := defaults()
	contract.Apply(&s, []Option{MaxConcurrent(3), MaxWait(time.Second), Enabled(false), nil})
	k := defaults()
	table := descriptor.Table()
	require.NoError(t, table.Set(&k, "maxConcurrent", "3"))
	require.NoError(t, table.Set(&k, "maxWait", "1s"))
	require.NoError(t, table.Set(&k, "enabled", "false"))
	assert.True(t, reflect.DeepEqual(s.Config, k.Config))

	b, err := New(MaxConcurrent(3), MaxWait(time.Second), Enabled(false))
	require.NoError(t, err)
	assert.True(t, reflect.DeepEqual(k.Config, b.Config()), "New builds what the options set")
}
