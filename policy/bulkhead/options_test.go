package bulkhead_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/sysclock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
)

func TestDefaults(t *testing.T) {
	assert.Equal(t, bulkhead.Config{MaxConcurrent: 25, MaxWait: 0, PriorityReserve: 0.5}, bulkhead.DefaultConfig())
	assert.False(t, bulkhead.DefaultConfig().Disabled, "the defaults are enabled")
	assert.NoError(t, bulkhead.DefaultConfig().Validate())

	b, err := bulkhead.New()
	require.NoError(t, err)
	assert.Equal(t, "", b.Snapshot().Instance)
	assert.True(t, sysclock.Is(b.Clock()))
	assert.Equal(t, bulkhead.Snapshot{AvailableSlots: 25, MaxConcurrent: 25}, b.Snapshot())
}

func TestValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  bulkhead.Option
		key  string
		code string
	}{
		{"zero slots", bulkhead.MaxConcurrent(0), "bulkhead.maxConcurrent", r4c.OutOfRange},
		{"negative slots", bulkhead.MaxConcurrent(-3), "bulkhead.maxConcurrent", r4c.OutOfRange},
		{"negative wait", bulkhead.MaxWait(-time.Millisecond), "bulkhead.maxWait", r4c.NegativeDuration},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := bulkhead.New(tc.opt)
			require.Nil(t, b)
			var ce *policy.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.code, ce.Code)
			assert.Equal(t, tc.key, ce.Key)
			assert.Contains(t, err.Error(), tc.code)
		})
	}
	b, err := bulkhead.New(bulkhead.MaxConcurrent(1), bulkhead.MaxWait(0))
	require.NoError(t, err)
	assert.Equal(t, 1, b.Config().MaxConcurrent)
}

func TestIDsAndCommonOptions(t *testing.T) {
	clk := clock.NewManual()
	b, err := bulkhead.New(bulkhead.Name("pool"))
	require.NoError(t, err)
	assert.Equal(t, "pool", b.Snapshot().Instance)

	b, err = bulkhead.New(bulkhead.Name("pool"), bulkhead.Name("Svc.Call"), bulkhead.UseConfig("small"),
		bulkhead.WithClock(clk), bulkhead.OnEvent(func(policy.Event) {}))
	require.NoError(t, err)
	assert.Equal(t, "Svc.Call", b.Snapshot().Instance)
	assert.Equal(t, clock.Clock(clk), b.Clock())

	fe := b.Rejection()
	var id interface{ InstanceID() string }
	require.True(t, errors.As(fe, &id))
	assert.Equal(t, "Svc.Call", id.InstanceID())
	assert.ErrorIs(t, fe, bulkhead.ErrFull)
	assert.Equal(t, `bulkhead: bulkhead "Svc.Call" is full`, fe.Error())
	assert.NoError(t, errors.Unwrap(fe))
	var r policy.Rejection
	require.True(t, errors.As(fe, &r))
	assert.Equal(t, bulkhead.Layer, r.RejectedBy())
	assert.Equal(t, policy.RefusalOverloaded, r.Refusal())
	_, known := r.RetryIn()
	assert.False(t, known)
	require.True(t, errors.As(bulkhead.ErrFull, &r), "the bare sentinel is a Refuser too")
}
