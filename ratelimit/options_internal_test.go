package ratelimit

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

func TestDescriptor(t *testing.T) {
	contracttest.RequireDescriptor(t, descriptor, Layer, "rateLimiter", []string{"permits", "period", "maxWait", "windows", "enabled", "shadow"},
		settings{})
}

func TestConfigSet(t *testing.T) {
	table := descriptor.Table()
	s := defaults()
	require.NoError(t, table.Set(&s, "permits", " 10 "))
	require.NoError(t, table.Set(&s, "period", "1s"))
	require.NoError(t, table.Set(&s, "maxWait", "250ms"))
	require.NoError(t, table.Set(&s, "enabled", "FALSE"))
	assert.Equal(t, rlcore.Config{Permits: 10, Period: time.Second, MaxWait: 250 * time.Millisecond, Disabled: true}, s.Config)
	require.NoError(t, table.Set(&s, "enabled", "true"))
	assert.False(t, s.Config.Disabled)

	contracttest.RequireRefused(t, descriptor, &s, []contracttest.BadValue{
		{Attr: "permits", Value: "ten", Code: r4c.BadNumber},
		{Attr: "period", Value: "10 parsecs", Code: r4c.BadDuration},
		{Attr: "maxWait", Value: "soon", Code: r4c.BadDuration},
		{Attr: "enabled", Value: "yes", Code: r4c.BadBoolean},
		{Attr: "windows", Value: "1000 per day", Code: r4c.BadNumber},
		{Attr: "maxKeys", Value: "10", Code: r4c.UnknownKey},
	})

	// Ranges are checked by the descriptor's Validate, as by the build.
	require.NoError(t, table.Set(&s, "permits", "0"))
	assert.Equal(t, r4c.BadPermits, r4c.CodeOf(descriptor.Validate(&s)))
	_, err := build(s)
	assert.Equal(t, r4c.BadPermits, r4c.CodeOf(err))
}

// Options in code and configuration keys land on the same Config; WithBackend and a keyed
// limiter's bounds are settings outside it.
func TestOptionsAndKeysAgree(t *testing.T) {
	s := defaults()
	contract.Apply(&s, []Option{Permits(3), Period(time.Second), MaxWait(time.Millisecond), Enabled(false),
		Windows(" 100/1m, 1000/24h "), func(s *settings) { s.MaxKeys = 7 }, nil})
	k := defaults()
	table := descriptor.Table()
	require.NoError(t, table.Set(&k, "permits", "3"))
	require.NoError(t, table.Set(&k, "period", "1s"))
	require.NoError(t, table.Set(&k, "maxWait", "1ms"))
	require.NoError(t, table.Set(&k, "enabled", "false"))
	require.NoError(t, table.Set(&k, "windows", "100/1m, 1000/24h"))
	assert.True(t, reflect.DeepEqual(s.Config, k.Config))
	assert.Equal(t, 7, s.MaxKeys)
	assert.Nil(t, s.Backend)

	b := nopBackend{}
	contract.Apply(&s, []Option{WithBackend(b)})
	assert.Equal(t, backend.Backend(b), s.Backend)
	assert.True(t, reflect.DeepEqual(s.Config, k.Config), "the backend is not part of Config")
}

// nopBackend is a backend that is only compared, never bound.
type nopBackend struct{}

func (nopBackend) Bind(backend.Binding) (backend.Store, error) { return nil, nil }
func (nopBackend) LocalShare() int                             { return 1 }

// An explicit 0 is a wrong value, not a missing one: the error says what is wrong with
// it, quoting the value as the configuration wrote it; only a value never set is "not
// set" (fault: period=0, -0 or 0.5ns, and Period(0) in code, said "is not set").
func TestZeroIsAWrongValueNotAnUnsetOne(t *testing.T) {
	const periodHint = " (set ratelimit.Period or rateLimiter.period)"
	const permitsHint = " (set ratelimit.Permits or rateLimiter.permits)"
	table := descriptor.Table()
	for _, c := range []struct{ attr, value, want string }{
		{"period", "0", `R4C-ATR-002: rateLimiter.period = "0": period must be positive` + periodHint},
		{"period", "-0", `R4C-ATR-002: rateLimiter.period = "-0": period must be positive` + periodHint},
		{"period", " 0.5ns ", `R4C-ATR-002: rateLimiter.period = "0.5ns": period must be positive, and this one is shorter than the 1ns unit of durations: it rounds to 0` + periodHint},
		{"period", "-3s", `R4C-ATR-002: rateLimiter.period = "-3s": period must be positive` + periodHint},
		{"permits", "0", `R4C-ATR-003: rateLimiter.permits = "0": permits must be at least 1` + permitsHint},
		{"permits", "-0", `R4C-ATR-003: rateLimiter.permits = "-0": permits must be at least 1` + permitsHint},
	} {
		t.Run(c.attr+"="+c.value, func(t *testing.T) {
			s := defaults()
			contract.Apply(&s, []Option{Permits(1), Period(time.Second)})
			require.NoError(t, table.Set(&s, c.attr, c.value))
			_, err := build(s)
			assert.EqualError(t, err, c.want)
		})
	}

	for _, c := range []struct {
		name string
		opts []Option
		want string
	}{
		{"Period(0)", []Option{Permits(1), Period(0)},
			`R4C-ATR-002: rateLimiter.period = "0s": period must be positive` + periodHint},
		{"Permits(0)", []Option{Permits(0), Period(time.Second)},
			`R4C-ATR-003: rateLimiter.permits = "0": permits must be at least 1` + permitsHint},
		{"Permits(0), no period", []Option{Permits(0)},
			`R4C-ATR-003: rateLimiter.permits = "0": permits must be at least 1` + permitsHint},
		{"no period", []Option{Permits(1)},
			"R4C-ATR-002: rateLimiter.period: period is not set: set ratelimit.Period or rateLimiter.period (positive)"},
		{"no permits", []Option{Period(time.Second)},
			"R4C-ATR-003: rateLimiter.permits: permits is not set: set ratelimit.Permits or rateLimiter.permits (at least 1)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.opts...)
			assert.EqualError(t, err, c.want)
		})
	}

	// A later setter replaces the text an earlier key gave.
	s := defaults()
	require.NoError(t, table.Set(&s, "period", "0.5ns"))
	contract.Apply(&s, []Option{Permits(1), Period(-time.Second)})
	_, err := build(s)
	assert.EqualError(t, err, `R4C-ATR-002: rateLimiter.period = "-1s": period must be positive`+periodHint)
	contract.Apply(&s, []Option{Period(time.Second)})
	_, err = build(s)
	assert.NoError(t, err)
}
