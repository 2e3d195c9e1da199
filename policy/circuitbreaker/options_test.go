package circuitbreaker_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cb "github.com/resilience4go/resilience4go/policy/circuitbreaker"
)

func TestDefaults(t *testing.T) {
	b, err := cb.New()
	require.NoError(t, err)
	assert.Equal(t, cb.Config{
		FailureRateThreshold:  50,
		SlidingWindowType:     cb.CountBased,
		SlidingWindowSize:     100,
		MinimumCalls:          100,
		WaitInOpen:            60 * time.Second,
		PermittedInHalfOpen:   10,
		MaxWaitInHalfOpen:     60 * time.Second,
		SlowCallThreshold:     0, // no slow-call detection (Resilience4j: 60s)
		SlowCallRateThreshold: 100,
	}, b.Config())
	assert.False(t, b.Config().Disabled, "the defaults are enabled")
	assert.Equal(t, "", b.Snapshot().Instance)
	assert.Equal(t, cb.Closed, b.State())
}

func TestInstanceID(t *testing.T) {
	b, err := cb.New(cb.Name("payments"))
	require.NoError(t, err)
	assert.Equal(t, "payments", b.Snapshot().Instance)
	b, err = cb.New(cb.Name("payments"), cb.Name("id"))
	require.NoError(t, err)
	assert.Equal(t, "id", b.Snapshot().Instance, "the last Name")
}

func TestConfigComparableForIdenticalOptions(t *testing.T) {
	build := func() cb.Config {
		b, err := cb.New(cb.SlidingWindowSize(7), cb.IgnoreOn(errIgnored), cb.RecordOn(errBoom, errOther))
		require.NoError(t, err)
		return b.Config()
	}
	assert.True(t, reflect.DeepEqual(build(), build()))
	other := build()
	other.RecordOn = []error{errBoom}
	assert.False(t, reflect.DeepEqual(build(), other))
}

func TestValidBoundaries(t *testing.T) {
	_, err := cb.New(cb.FailureRateThreshold(100), cb.SlowCallRateThreshold(0.001), cb.SlidingWindowSize(1),
		cb.MinimumCalls(1), cb.WaitInOpen(0), cb.PermittedInHalfOpen(1), cb.SlowCallThreshold(1),
		cb.MaxWaitInHalfOpen(1))
	require.NoError(t, err)
	_, err = cb.New(cb.SlidingWindowType(cb.TimeBased), cb.SlidingWindowSize(cb.MaxWindowSize))
	require.NoError(t, err)
}
