package resilience_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/samber/lo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/fallback"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// lockedKeys returns the keys of the registry's ignored overrides, checking their code.
func lockedKeys(t *testing.T, reg *resilience.Registry) []string {
	t.Helper()
	var keys []string
	for _, ce := range reg.LockedOverrides() {
		assert.Equal(t, r4c.LockedOverride, ce.Code)
		keys = append(keys, ce.Key)
	}
	return keys
}

// SPEC LK-1: the precedence of code, locked code, defaults, configs and instances. The
// options in code set permits; period and maxWait are left to the keys.
func TestLK1_Precedence(t *testing.T) {
	const (
		permits = "instances.A.B.rateLimiter.permits"
		cPerm   = "configs.c.rateLimiter.permits"
	)
	code := []ratelimit.Option{ratelimit.Permits(3), ratelimit.UseConfig("c")}
	base := map[string]string{"configs.c.rateLimiter.period": "2s"} // so that configs.c exists
	for _, tc := range []struct {
		name      string
		props     map[string]string
		locked    bool
		want      ratelimit.Config
		overruled []string // the ignored overrides
	}{
		{name: "code over built-in defaults", want: ratelimit.Config{Permits: 3, Period: 2 * time.Second}},
		{name: "locked code over built-in defaults", locked: true, want: ratelimit.Config{Permits: 3, Period: 2 * time.Second}},
		{name: "code over defaults", props: map[string]string{"defaults.rateLimiter.permits": "8"},
			want: ratelimit.Config{Permits: 3, Period: 2 * time.Second}},
		{name: "locked code over defaults, which it does not report", locked: true, props: map[string]string{"defaults.rateLimiter.permits": "8"},
			want: ratelimit.Config{Permits: 3, Period: 2 * time.Second}},
		{name: "configs over code", props: map[string]string{cPerm: "5"},
			want: ratelimit.Config{Permits: 5, Period: 2 * time.Second}},
		{name: "locked code over configs", locked: true, props: map[string]string{cPerm: "5"},
			want: ratelimit.Config{Permits: 3, Period: 2 * time.Second}, overruled: []string{cPerm}},
		{name: "instances over code", props: map[string]string{permits: "7"},
			want: ratelimit.Config{Permits: 7, Period: 2 * time.Second}},
		{name: "locked code over instances", locked: true, props: map[string]string{permits: "7"},
			want: ratelimit.Config{Permits: 3, Period: 2 * time.Second}, overruled: []string{permits}},
		{name: "locked code over configs and instances: the instance's key is the one ignored", locked: true,
			props: map[string]string{cPerm: "5", permits: "7"},
			want:  ratelimit.Config{Permits: 3, Period: 2 * time.Second}, overruled: []string{permits}},
		{name: "a key of the locked value changes nothing: not reported", locked: true, props: map[string]string{permits: "3"},
			want: ratelimit.Config{Permits: 3, Period: 2 * time.Second}},
		{name: "what locked code leaves unset: instances over configs over defaults", locked: true,
			props: map[string]string{
				"defaults.rateLimiter.maxWait":     "1s",
				"defaults.rateLimiter.period":      "9s",
				"configs.c.rateLimiter.maxWait":    "2s",
				"instances.A.B.rateLimiter.period": "4s",
			},
			want: ratelimit.Config{Permits: 3, Period: 4 * time.Second, MaxWait: 2 * time.Second}},
		{name: "what code leaves unset, unlocked: the same",
			props: map[string]string{
				"defaults.rateLimiter.maxWait":     "1s",
				"configs.c.rateLimiter.maxWait":    "2s",
				"instances.A.B.rateLimiter.period": "4s",
			},
			want: ratelimit.Config{Permits: 3, Period: 4 * time.Second, MaxWait: 2 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			props := lo.Assign(base, tc.props)
			reg, _ := newRegistry(t, resilience.WithProperties(props))
			spec := resilience.RateLimiter(code...)
			if tc.locked {
				spec = resilience.Locked(spec)
			}
			_, err := resilience.Wrap(reg, "A.B", func(context.Context) (int, error) { return 0, nil }, spec)
			require.NoError(t, err)
			h, err := reg.RateLimiter("A.B")
			require.NoError(t, err)
			assert.Equal(t, tc.want, h.(*ratelimit.Limiter).Config())
			assert.Equal(t, tc.overruled, lockedKeys(t, reg))
		})
	}
}

// SPEC LK-1: a spec function's leading value (a timeout's duration) is code, locked too;
// and a fallback, built for each composition, locks as the others.
func TestLK1_LeadingValueAndFallback(t *testing.T) {
	reg, _ := newRegistry(t, resilience.WithProperties(map[string]string{
		"instances.A.B.timeout.duration": "5s",
		"instances.A.B.fallback.enabled": "true",
	}))
	fb := func(context.Context, error) (int, error) { return 1, nil }
	_, err := resilience.Wrap(reg, "A.B", func(context.Context) (int, error) { return 0, nil },
		resilience.Locked(resilience.Timeout(2*time.Second)),
		resilience.Locked(resilience.Fallback(fb, fallback.Enabled(false))))
	require.NoError(t, err)
	to, err := resilience.Lookup[*timeout.Timeout](reg, timeout.Layer, "A.B")
	require.NoError(t, err)
	assert.Equal(t, 2*time.Second, to.Config().Duration)
	assert.Equal(t, []string{"instances.A.B.fallback.enabled", "instances.A.B.timeout.duration"}, lockedKeys(t, reg))

	// SPEC LK-2: a fallback cannot change on a running composition (R4C-REG-012), but a key
	// that its locked value overrules changes nothing: the reload goes through.
	require.NoError(t, reg.Reload(map[string]string{
		"instances.A.B.timeout.duration": "6s",
		"instances.A.B.fallback.enabled": "true",
	}))
	assert.Equal(t, 2*time.Second, to.Config().Duration)
	assert.Equal(t, "6s", reg.LockedOverrides()[1].Value)
	err = reg.Reload(map[string]string{"instances.A.B.fallback.enabled": "true", "defaults.timeout.duration": "1s"})
	require.NoError(t, err, "what the locked options set, no key changes")
}

// SPEC LK-2, LK-3: a reload keeps the locked values; the overrides it adds are reported once,
// with R4C-CFG-014, to the registry's listeners, which may call the registry.
func TestLK3_ReportedOnce(t *testing.T) {
	var events []policy.Event
	var reg *resilience.Registry
	var seen [][]*policy.ConfigError
	period := map[string]string{"defaults.rateLimiter.period": "1s"}
	with := func(props map[string]string) map[string]string { return lo.Assign(period, props) }
	reg, _ = newRegistry(t, resilience.WithProperties(with(map[string]string{"instances.A.B.rateLimiter.permits": "7"})),
		resilience.WithEventListener(func(e policy.Event) {
			if e.Kind == resilience.EventLockedOverride {
				events = append(events, e)
				seen = append(seen, reg.LockedOverrides()) // the registry is not locked
			}
		}))
	f := func(context.Context) (int, error) { return 0, nil }
	spec := resilience.Locked(resilience.RateLimiter(ratelimit.Permits(3), ratelimit.Name("shared")))
	_, err := resilience.Wrap(reg, "A.B", f, resilience.Locked(resilience.RateLimiter(ratelimit.Permits(3))))
	require.NoError(t, err)
	require.Len(t, events, 1, "reported when the instance is created")
	e := events[0]
	assert.Equal(t, "A.B", e.Instance)
	assert.Equal(t, slog.LevelWarn, e.Level())
	ce := requireCode(t, e.Err, "R4C-CFG-014")
	assert.Equal(t, policy.ConfigError{Code: "R4C-CFG-014", Key: "instances.A.B.rateLimiter.permits", Value: "7",
		Reason: `ignored: the rateLimiter of instance A.B is locked, and its options in code set permits`}, *ce)
	assert.Equal(t, `R4C-CFG-014: instances.A.B.rateLimiter.permits = "7": ignored: the rateLimiter of instance A.B is locked, and its options in code set permits`, ce.Error())
	assert.Len(t, seen[0], 1)

	// Two functions share a locked instance by name: one report for its key.
	require.NoError(t, reg.Reload(with(map[string]string{"instances.A.B.rateLimiter.permits": "7", "instances.shared.rateLimiter.permits": "9"})))
	assert.Len(t, events, 1, "a reload adds nothing new: nothing more is reported")
	_, err = resilience.Wrap(reg, "C.D", f, spec)
	require.NoError(t, err)
	_, err = resilience.Wrap(reg, "E.F", f, spec)
	require.NoError(t, err)
	require.Len(t, events, 2)
	assert.Equal(t, "shared", events[1].Instance)
	assert.Equal(t, []string{"instances.A.B.rateLimiter.permits", "instances.shared.rateLimiter.permits"}, lockedKeys(t, reg))

	// A changed value is reported again; the locked values stay.
	require.NoError(t, reg.Reload(with(map[string]string{"instances.A.B.rateLimiter.permits": "8", "instances.A.B.rateLimiter.period": "2s"})))
	require.Len(t, events, 3)
	assert.Equal(t, "8", events[2].Err.(*policy.ConfigError).Value)
	h, err := reg.RateLimiter("A.B")
	require.NoError(t, err)
	assert.Equal(t, ratelimit.Config{Permits: 3, Period: 2 * time.Second}, h.(*ratelimit.Limiter).Config(), "the reload's other key applies")
	assert.Equal(t, []string{"instances.A.B.rateLimiter.permits"}, lockedKeys(t, reg))

	// Removed, then added back: reported again.
	require.NoError(t, reg.Reload(period))
	assert.Empty(t, reg.LockedOverrides())
	require.NoError(t, reg.Reload(with(map[string]string{"instances.A.B.rateLimiter.permits": "8"})))
	assert.Len(t, events, 4)
}

// SPEC LK-3: a failed wrap reports nothing and lists nothing.
func TestLK3_FailedWrapReportsNothing(t *testing.T) {
	var events []policy.Event
	reg, _ := newRegistry(t, resilience.WithProperties(map[string]string{"instances.A.B.rateLimiter.permits": "7"}),
		resilience.WithEventListener(func(e policy.Event) { events = append(events, e) }))
	_, err := resilience.Wrap(reg, "A.B", func(context.Context) (int, error) { return 0, nil },
		resilience.Locked(resilience.RateLimiter(ratelimit.Permits(3), ratelimit.Period(time.Second))),
		resilience.Fallback(func(context.Context, error) (string, error) { return "", nil }))
	requireCode(t, err, "R4C-REG-010")
	assert.Empty(t, events)
	assert.Empty(t, reg.LockedOverrides())
}

// SPEC LK-4: Locked takes a policy's spec; any other fails the wrap with R4C-REG-010.
func TestLK4_NotAPolicy(t *testing.T) {
	reg, _ := newRegistry(t)
	f := func(context.Context) (int, error) { return 0, nil }
	for _, s := range []resilience.Spec{nil, resilience.Order(timeout.Layer)} {
		_, err := resilience.Wrap(reg, "A.B", f, resilience.Locked(s))
		requireCode(t, err, "R4C-REG-010")
	}
	var nilReg *resilience.Registry
	assert.Nil(t, nilReg.LockedOverrides())
}
