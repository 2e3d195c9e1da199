package throttle

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/r4c"
)

func TestDescriptor(t *testing.T) {
	contracttest.RequireDescriptor(t, descriptor, Layer, "throttle", []string{"k", "window", "maxRejection", "enabled"},
		settings{Config: DefaultConfig()})
}

func TestSetAttributes(t *testing.T) {
	table := descriptor.Table()
	s := defaults()
	require.NoError(t, table.Set(&s, "k", " 1.5 "))
	require.NoError(t, table.Set(&s, "window", "2m"))
	require.NoError(t, table.Set(&s, "maxRejection", "1"))
	require.NoError(t, table.Set(&s, "enabled", "false"))
	assert.Equal(t, Config{K: 1.5, Window: 2 * time.Minute, MaxRejection: 1, Disabled: true}, s.Config)

	contracttest.RequireRefused(t, descriptor, &s, []contracttest.BadValue{
		{Attr: "k", Value: "two", Code: r4c.BadNumber},
		{Attr: "window", Value: "a minute", Code: r4c.BadDuration},
		{Attr: "maxRejection", Value: "90%", Code: r4c.BadNumber},
		{Attr: "enabled", Value: "maybe", Code: r4c.BadBoolean},
	})
	for _, tc := range []struct{ attr, value, code string }{
		{"k", "0.5", r4c.OutOfRange},
		{"k", "+Inf", r4c.BadNumber},
		{"window", "0", r4c.OutOfRange},
		{"window", "-1s", r4c.NegativeDuration},
		{"maxRejection", "0", r4c.OutOfRange},
		{"maxRejection", "1.5", r4c.OutOfRange},
	} {
		attr, err := descriptor.CheckRange(map[string]string{tc.attr: tc.value})
		assert.Equal(t, tc.attr, attr, "%s=%s", tc.attr, tc.value)
		assert.Equal(t, tc.code, r4c.CodeOf(err), "%s=%s", tc.attr, tc.value)
	}
}
