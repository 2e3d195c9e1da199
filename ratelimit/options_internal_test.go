package ratelimit

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/kind"
	"github.com/resilience4go/resilience4go/internal/kindtest"
	"github.com/resilience4go/resilience4go/policy"
)

func TestDescriptor(t *testing.T) {
	assert.Equal(t, policy.LayerRateLimiter, descriptor.Layer())
	assert.Equal(t, "rateLimiter", descriptor.Table().Segment)
	assert.Equal(t, []string{"permits", "period", "maxWait", "enabled"}, descriptor.Attributes())
	assert.Equal(t, settings{Config: DefaultConfig()}, defaults())
	k, ok := kind.Lookup(policy.LayerRateLimiter)
	require.True(t, ok, "registered")
	assert.Same(t, descriptor, k)
}

func TestConfigSet(t *testing.T) {
	table := descriptor.Table()
	s := defaults()
	require.NoError(t, table.Set(&s, "permits", " 10 "))
	require.NoError(t, table.Set(&s, "period", "1s"))
	require.NoError(t, table.Set(&s, "maxWait", "250ms"))
	require.NoError(t, table.Set(&s, "enabled", "FALSE"))
	assert.Equal(t, Config{Permits: 10, Period: time.Second, MaxWait: 250 * time.Millisecond, Disabled: true}, s.Config)
	require.NoError(t, table.Set(&s, "enabled", "true"))
	assert.False(t, s.Disabled)

	kindtest.RequireRefused(t, descriptor, &s, []kindtest.BadValue{
		{Attr: "permits", Value: "ten", Code: policy.CodeBadNumber},
		{Attr: "period", Value: "10 parsecs", Code: policy.CodeBadDuration},
		{Attr: "maxWait", Value: "soon", Code: policy.CodeBadDuration},
		{Attr: "enabled", Value: "yes", Code: policy.CodeBadBoolean},
		{Attr: "maxKeys", Value: "10", Code: policy.CodeUnknownKey},
	})

	// Ranges are checked by Validate.
	require.NoError(t, table.Set(&s, "permits", "0"))
	assert.Equal(t, policy.CodeBadPermits, policy.CodeOf(s.Config.Validate()))
	_, err := build(s)
	assert.Equal(t, policy.CodeBadPermits, policy.CodeOf(err))
}

// Options in code and configuration keys land on the same Config; WithBackend and MaxKeys
// are settings outside it.
func TestOptionsAndKeysAgree(t *testing.T) {
	s := defaults()
	kind.Apply(&s, []Option{Permits(3), Period(time.Second), MaxWait(time.Millisecond), Enabled(false),
		MaxKeys(7), nil})
	k := defaults()
	table := descriptor.Table()
	require.NoError(t, table.Set(&k, "permits", "3"))
	require.NoError(t, table.Set(&k, "period", "1s"))
	require.NoError(t, table.Set(&k, "maxWait", "1ms"))
	require.NoError(t, table.Set(&k, "enabled", "false"))
	assert.True(t, reflect.DeepEqual(s.Config, k.Config))
	assert.Equal(t, 7, s.maxKeys)
	assert.Nil(t, s.backend)

	b := nopBackend{}
	kind.Apply(&s, []Option{WithBackend(b)})
	assert.Equal(t, Backend(b), s.backend)
	assert.True(t, reflect.DeepEqual(s.Config, k.Config), "the backend is not part of Config")
}

// nopBackend is a Backend that is only compared, never bound.
type nopBackend struct{}

func (nopBackend) Bind(Binding) (Store, error) { return nil, nil }
