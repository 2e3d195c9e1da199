package hedge

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

// SPEC HG-16, RG-4: the descriptor and its attributes.
func TestHG16_Descriptor(t *testing.T) {
	contracttest.RequireDescriptor(t, descriptor, Layer, "hedge", []string{"delay", "maxAttempts", "budgetPercent", "budgetWindow", "budgetMinPerSecond",
		"budgetEnabled", "enabled"},
		settings{config: DefaultConfig()})

	h, err := descriptor.Build(defaults())
	require.NoError(t, err)
	assert.Equal(t, DefaultConfig(), descriptor.Of(h))
	assert.Equal(t, h.(*Hedge).Snapshot(), descriptor.State(h))
	s := defaults()
	assert.Equal(t, DefaultConfig(), descriptor.Config(&s))
}

func TestHG16_SetAttributes(t *testing.T) {
	table := descriptor.Table()
	s := defaults()
	require.NoError(t, table.Set(&s, "delay", "200ms"))
	require.NoError(t, table.Set(&s, "maxAttempts", " 3 "))
	require.NoError(t, table.Set(&s, "budgetPercent", "12.5"))
	require.NoError(t, table.Set(&s, "budgetWindow", "1m"))
	require.NoError(t, table.Set(&s, "budgetMinPerSecond", "0.25"))
	require.NoError(t, table.Set(&s, "budgetEnabled", "false"))
	require.NoError(t, table.Set(&s, "enabled", "false"))
	assert.Equal(t, Config{Delay: 200 * time.Millisecond, MaxAttempts: 3, BudgetPercent: 12.5,
		BudgetWindow: time.Minute, BudgetMinPerSecond: 0.25, NoBudget: true, Disabled: true}, s.config)
	require.NoError(t, table.Set(&s, "budgetEnabled", "TRUE"))
	assert.False(t, s.NoBudget)

	contracttest.RequireRefused(t, descriptor, &s, []contracttest.BadValue{
		{Attr: "delay", Value: "soon", Code: r4c.BadDuration},
		{Attr: "maxAttempts", Value: "two", Code: r4c.BadNumber},
		{Attr: "budgetPercent", Value: "NaN", Code: r4c.BadNumber},
		{Attr: "budgetPercent", Value: "1e400", Code: r4c.OutOfRange},
		{Attr: "budgetWindow", Value: "10", Code: r4c.BadDuration},
		{Attr: "budgetMinPerSecond", Value: "+Inf", Code: r4c.BadNumber},
		{Attr: "budgetEnabled", Value: "yes", Code: r4c.BadBoolean},
		{Attr: "enabled", Value: "on", Code: r4c.BadBoolean},
		{Attr: "maxWait", Value: "1s", Code: r4c.UnknownKey},
	})

	for _, tc := range []struct{ attr, value, code string }{
		{"maxAttempts", "1", r4c.BadAttempts},
		{"maxAttempts", "11", r4c.BadAttempts},
		{"delay", "-1ms", r4c.NegativeDuration},
		{"budgetPercent", "101", r4c.OutOfRange},
		{"budgetWindow", "0s", r4c.OutOfRange},
		{"budgetMinPerSecond", "-0.5", r4c.OutOfRange},
	} {
		attr, err := descriptor.CheckRange(map[string]string{tc.attr: tc.value})
		assert.Equal(t, tc.attr, attr)
		assert.Equal(t, tc.code, r4c.CodeOf(err), "%s = %s", tc.attr, tc.value)
		s := defaults()
		require.NoError(t, table.Set(&s, tc.attr, tc.value))
		_, err = build(s)
		assert.Equal(t, tc.code, r4c.CodeOf(err), "build agrees with CheckRange")
	}
}

// Options in code and configuration keys land on the same Config (SPEC RG-4).
func TestHG16_OptionsAndKeysAgree(t *testing.T) {
	s := defaults()
	contract.Apply(&s, []Option{Delay(200 * time.Millisecond), MaxAttempts(3), BudgetPercent(5),
		BudgetWindow(time.Minute), BudgetMinPerSecond(2), Budget(false), Enabled(false), nil})
	k := defaults()
	table := descriptor.Table()
	for attr, v := range map[string]string{"delay": "200ms", "maxAttempts": "3", "budgetPercent": "5",
		"budgetWindow": "1m", "budgetMinPerSecond": "2", "budgetEnabled": "false", "enabled": "false"} {
		require.NoError(t, table.Set(&k, attr, v))
	}
	assert.True(t, reflect.DeepEqual(s.config, k.config))

	h, err := New(Delay(200*time.Millisecond), MaxAttempts(3), BudgetPercent(5), BudgetWindow(time.Minute),
		BudgetMinPerSecond(2), Budget(false), Enabled(false))
	require.NoError(t, err)
	assert.True(t, reflect.DeepEqual(k.config, h.Config()), "New builds what the options set")
}
