package hedge_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/sysclock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/hedge"
)

// SPEC HG-16: the defaults.
func TestHG16_Defaults(t *testing.T) {
	assert.Equal(t, hedge.Config{Delay: time.Second, MaxAttempts: 2, BudgetPercent: 10,
		BudgetWindow: 10 * time.Second, BudgetMinPerSecond: 1}, hedge.DefaultConfig())
	assert.False(t, hedge.DefaultConfig().Disabled, "the defaults are enabled")
	assert.False(t, hedge.DefaultConfig().NoBudget, "the defaults have the budget on")
	assert.NoError(t, hedge.DefaultConfig().Validate())

	h, err := hedge.New()
	require.NoError(t, err)
	assert.Equal(t, "", h.Snapshot().Instance)
	assert.True(t, sysclock.Is(h.Clock()))
	assert.Equal(t, hedge.DefaultConfig(), h.Config())
	assert.Equal(t, withBudget(hedge.Snapshot{BudgetAvailable: 10, Delay: time.Second, MaxAttempts: 2}),
		h.Snapshot(), "an empty window allows max(10% of 0, 1/s × 10s) = 10 hedges")
}

// SPEC HG-16: invalid values are *policy.ConfigError with their codes, never a panic:
// R4C-ATR-008 for maxAttempts outside 2..10, R4C-ATR-004 for a negative delay,
// R4C-ATR-007 for each budget field (NaN and ±Inf too).
func TestHG16_Validation(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name string
		opt  hedge.Option
		key  string
		code string
	}{
		{"one attempt", hedge.MaxAttempts(1), "hedge.maxAttempts", r4c.BadAttempts},
		{"eleven attempts", hedge.MaxAttempts(11), "hedge.maxAttempts", r4c.BadAttempts},
		{"no attempt", hedge.MaxAttempts(0), "hedge.maxAttempts", r4c.BadAttempts},
		{"negative delay", hedge.Delay(-time.Nanosecond), "hedge.delay", r4c.NegativeDuration},
		{"negative percent", hedge.BudgetPercent(-0.1), "hedge.budgetPercent", r4c.OutOfRange},
		{"percent over 100", hedge.BudgetPercent(100.5), "hedge.budgetPercent", r4c.OutOfRange},
		{"NaN percent", hedge.BudgetPercent(nan), "hedge.budgetPercent", r4c.OutOfRange},
		{"infinite percent", hedge.BudgetPercent(inf), "hedge.budgetPercent", r4c.OutOfRange},
		{"zero window", hedge.BudgetWindow(0), "hedge.budgetWindow", r4c.OutOfRange},
		{"negative window", hedge.BudgetWindow(-time.Second), "hedge.budgetWindow", r4c.OutOfRange},
		{"negative floor", hedge.BudgetMinPerSecond(-1), "hedge.budgetMinPerSecond", r4c.OutOfRange},
		{"NaN floor", hedge.BudgetMinPerSecond(nan), "hedge.budgetMinPerSecond", r4c.OutOfRange},
		{"infinite floor", hedge.BudgetMinPerSecond(inf), "hedge.budgetMinPerSecond", r4c.OutOfRange},
		{"minus infinite floor", hedge.BudgetMinPerSecond(-inf), "hedge.budgetMinPerSecond", r4c.OutOfRange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, extra := range []hedge.Option{nil, hedge.Budget(false), hedge.Enabled(false)} {
				h, err := hedge.New(tc.opt, extra)
				require.Nil(t, h)
				var ce *policy.ConfigError
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, tc.code, ce.Code)
				assert.Equal(t, tc.key, ce.Key)
				assert.Contains(t, err.Error(), tc.code)
				assert.True(t, errors.Is(err, &policy.ConfigError{Code: tc.code}))
			}
		})
	}
	for _, opts := range [][]hedge.Option{
		{hedge.MaxAttempts(2), hedge.Delay(0)},
		{hedge.MaxAttempts(10)},
		{hedge.BudgetPercent(0), hedge.BudgetMinPerSecond(0)},
		{hedge.BudgetPercent(100), hedge.BudgetWindow(time.Nanosecond)},
		{hedge.BudgetWindow(200 * 365 * 24 * time.Hour), hedge.BudgetMinPerSecond(1e300)},
	} {
		_, err := hedge.New(opts...)
		assert.NoError(t, err)
	}
	assert.Equal(t, r4c.BadAttempts, r4c.CodeOf(hedge.Config{}.Validate()), "the zero Config is not valid")
}

func TestHG16_IDsAndCommonOptions(t *testing.T) {
	clk := clock.NewManual()
	h, err := hedge.New(hedge.Name("search"))
	require.NoError(t, err)
	assert.Equal(t, "search", h.Snapshot().Instance)

	errA, errB := errors.New("a"), errors.New("b")
	h, err = hedge.New(hedge.Name("search"), hedge.Name("Svc.Call"), hedge.UseConfig("fast"),
		hedge.WithClock(clk), hedge.OnEvent(func(policy.Event) {}), hedge.Delay(50*time.Millisecond),
		hedge.MaxAttempts(3), hedge.On(errA), hedge.On(nil, errB), hedge.AbortOn(errB),
		hedge.BudgetPercent(5), hedge.BudgetWindow(time.Minute), hedge.BudgetMinPerSecond(0.5), hedge.Budget(false))
	require.NoError(t, err)
	assert.Equal(t, "Svc.Call", h.Snapshot().Instance)
	assert.Equal(t, clock.Clock(clk), h.Clock())
	assert.Equal(t, hedge.Config{Delay: 50 * time.Millisecond, MaxAttempts: 3, HedgeOn: []error{errA, errB},
		AbortOn: []error{errB}, BudgetPercent: 5, BudgetWindow: time.Minute, BudgetMinPerSecond: 0.5,
		NoBudget: true}, h.Config())
	assert.Equal(t, hedge.Snapshot{Instance: "Svc.Call", BudgetAvailable: -1, Delay: 50 * time.Millisecond,
		MaxAttempts: 3, HedgeOn: []error{errA, errB}, AbortOn: []error{errB}, BudgetPercent: 5,
		BudgetWindow: time.Minute, BudgetMinPerSecond: 0.5, NoBudget: true}, h.Snapshot(),
		"the snapshot reports the settings")

	c := hedge.DefaultConfig()
	c.MaxAttempts = 4
	h, err = hedge.New(hedge.WithConfig(c), hedge.Delay(time.Millisecond), hedge.Enabled(false))
	require.NoError(t, err)
	assert.Equal(t, 4, h.Config().MaxAttempts)
	assert.Equal(t, time.Millisecond, h.Config().Delay, "options after WithConfig change it")
	assert.True(t, h.Config().Disabled)
}
