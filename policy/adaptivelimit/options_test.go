package adaptivelimit_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/sysclock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
)

// SPEC AL-2: the defaults.
func TestDefaults(t *testing.T) {
	l, err := adaptivelimit.New()
	require.NoError(t, err)
	assert.Equal(t, adaptivelimit.Config{Algorithm: adaptivelimit.Vegas, InitialLimit: 20, MinLimit: 1, MaxLimit: 200,
		BackoffRatio: 0.9, LatencyThreshold: 5 * time.Second, Tolerance: 1.5, Smoothing: 0.2, BaselineWindow: 50,
		PriorityReserve: 0.5},
		l.Config())
	assert.Equal(t, "", l.Snapshot().Instance)
	assert.True(t, sysclock.Is(l.Clock()))
	assert.Equal(t, adaptivelimit.Snapshot{Algorithm: adaptivelimit.Vegas, Limit: 20,
		MinLimit: 1, MaxLimit: 200}, l.Snapshot())
}

// SPEC AL-2: a bad configuration is a *policy.ConfigError with its code and key, never a
// panic; every algorithm's parameters are checked whichever is chosen.
func TestValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []adaptivelimit.Option
		key  string
		code string
	}{
		{"unknown algorithm", []adaptivelimit.Option{adaptivelimit.UseAlgorithm("cubic")}, "adaptiveLimit.algorithm", r4c.OutOfRange},
		{"empty algorithm", []adaptivelimit.Option{adaptivelimit.UseAlgorithm("")}, "adaptiveLimit.algorithm", r4c.OutOfRange},
		{"zero min", []adaptivelimit.Option{adaptivelimit.MinLimit(0)}, "adaptiveLimit.minLimit", r4c.OutOfRange},
		{"negative min", []adaptivelimit.Option{adaptivelimit.MinLimit(-1)}, "adaptiveLimit.minLimit", r4c.OutOfRange},
		{"max below min", []adaptivelimit.Option{adaptivelimit.MinLimit(10), adaptivelimit.MaxLimit(9), adaptivelimit.InitialLimit(10)},
			"adaptiveLimit.maxLimit", r4c.OutOfRange},
		{"max above ceiling", []adaptivelimit.Option{adaptivelimit.MaxLimit(adaptivelimit.MaxLimitCeiling + 1)},
			"adaptiveLimit.maxLimit", r4c.OutOfRange},
		{"initial below min", []adaptivelimit.Option{adaptivelimit.MinLimit(5), adaptivelimit.InitialLimit(4)},
			"adaptiveLimit.initialLimit", r4c.OutOfRange},
		{"initial above max", []adaptivelimit.Option{adaptivelimit.MaxLimit(10)}, "adaptiveLimit.initialLimit", r4c.OutOfRange},
		{"negative wait", []adaptivelimit.Option{adaptivelimit.MaxWait(-time.Millisecond)}, "adaptiveLimit.maxWait", r4c.NegativeDuration},
		{"backoff 1", []adaptivelimit.Option{adaptivelimit.BackoffRatio(1)}, "adaptiveLimit.backoffRatio", r4c.OutOfRange},
		{"backoff low", []adaptivelimit.Option{adaptivelimit.BackoffRatio(0.4)}, "adaptiveLimit.backoffRatio", r4c.OutOfRange},
		{"backoff NaN", []adaptivelimit.Option{adaptivelimit.BackoffRatio(math.NaN())}, "adaptiveLimit.backoffRatio", r4c.OutOfRange},
		{"negative threshold", []adaptivelimit.Option{adaptivelimit.LatencyThreshold(-time.Second)},
			"adaptiveLimit.latencyThreshold", r4c.NegativeDuration},
		{"zero threshold", []adaptivelimit.Option{adaptivelimit.LatencyThreshold(0)}, "adaptiveLimit.latencyThreshold", r4c.OutOfRange},
		{"tolerance below 1", []adaptivelimit.Option{adaptivelimit.Tolerance(0.99)}, "adaptiveLimit.tolerance", r4c.OutOfRange},
		{"tolerance infinite", []adaptivelimit.Option{adaptivelimit.Tolerance(math.Inf(1))}, "adaptiveLimit.tolerance", r4c.OutOfRange},
		{"zero smoothing", []adaptivelimit.Option{adaptivelimit.Smoothing(0)}, "adaptiveLimit.smoothing", r4c.OutOfRange},
		{"smoothing above 1", []adaptivelimit.Option{adaptivelimit.Smoothing(1.01)}, "adaptiveLimit.smoothing", r4c.OutOfRange},
		{"zero window", []adaptivelimit.Option{adaptivelimit.BaselineWindow(0)}, "adaptiveLimit.baselineWindow", r4c.OutOfRange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := adaptivelimit.New(tc.opts...)
			require.Nil(t, l)
			var ce *policy.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.code, ce.Code)
			assert.Equal(t, tc.key, ce.Key)
			assert.Contains(t, err.Error(), tc.code)
		})
	}

	_, err := adaptivelimit.New(adaptivelimit.UseAlgorithm("cubic"))
	assert.EqualError(t, err, `R4C-ATR-007: adaptiveLimit.algorithm = "cubic": algorithm must be one of "aimd", "gradient2" or "vegas"`)

	l, err := adaptivelimit.New(adaptivelimit.UseAlgorithm(adaptivelimit.AIMD), adaptivelimit.MinLimit(3),
		adaptivelimit.MaxLimit(3), adaptivelimit.InitialLimit(3), adaptivelimit.BackoffRatio(0.5),
		adaptivelimit.LatencyThreshold(time.Nanosecond), adaptivelimit.Tolerance(1), adaptivelimit.Smoothing(1),
		adaptivelimit.BaselineWindow(1), adaptivelimit.MaxWait(0))
	require.NoError(t, err, "the bounds are valid")
	assert.Equal(t, 3, l.Limit())

	// SPEC AL-3: the option reads the algorithm in any case, as the key does.
	for _, a := range []string{"AIMD", " Vegas ", "GRADIENT2"} {
		l, err := adaptivelimit.New(adaptivelimit.UseAlgorithm(a))
		require.NoError(t, err, "%q", a)
		assert.Equal(t, strings.ToLower(strings.TrimSpace(a)), l.Config().Algorithm)
	}
}

func TestIDsAndCommonOptions(t *testing.T) {
	clk := clock.NewManual()
	l, err := adaptivelimit.New(adaptivelimit.Name("db"))
	require.NoError(t, err)
	assert.Equal(t, "db", l.Snapshot().Instance)

	errX := errors.New("x")
	l, err = adaptivelimit.New(adaptivelimit.Name("db"), adaptivelimit.Name("Repo.Find"), adaptivelimit.UseConfig("small"),
		adaptivelimit.WithClock(clk), adaptivelimit.OnEvent(func(policy.Event) {}), adaptivelimit.DropOn(errX, nil),
		adaptivelimit.IgnoreOn(nil, errX))
	require.NoError(t, err)
	assert.Equal(t, "Repo.Find", l.Snapshot().Instance)
	assert.Equal(t, clock.Clock(clk), l.Clock())
	assert.Equal(t, []error{errX}, l.Config().DropOn, "nil errors are skipped")
	assert.Equal(t, []error{errX}, l.Config().IgnoreOn)

	var ee *adaptivelimit.ExceededError
	require.True(t, errors.As(l.Rejection(), &ee))
	assert.Equal(t, "Repo.Find", ee.InstanceID())
	assert.ErrorIs(t, ee, adaptivelimit.ErrLimitExceeded)
	assert.Equal(t, `adaptivelimit: concurrency limit of "Repo.Find" exceeded`, ee.Error())
	assert.NoError(t, ee.Unwrap())
}

// Options that add to a list never write into the list of a copy of the settings.
func TestListsAreNotShared(t *testing.T) {
	errA, errB, errC := errors.New("a"), errors.New("b"), errors.New("c")
	base := make([]adaptivelimit.Option, 1, 4)
	base[0] = adaptivelimit.DropOn(errA)
	one, err := adaptivelimit.New(append(base, adaptivelimit.DropOn(errB))...)
	require.NoError(t, err)
	two, err := adaptivelimit.New(append(base, adaptivelimit.DropOn(errC))...)
	require.NoError(t, err)
	assert.Equal(t, []error{errA, errB}, one.Config().DropOn)
	assert.Equal(t, []error{errA, errC}, two.Config().DropOn)
}
