package resilience_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// SPEC SH-4: the key <layer>.shadow turns shadow mode on and off on a running instance
// of each layer that has it, at a reload, whose ConfigChanged event names "shadow".
func TestSH4_ReloadTogglesShadow(t *testing.T) {
	for _, tc := range []struct {
		layer  policy.Layer
		spec   resilience.Spec
		props  map[string]string
		shadow func(reg *resilience.Registry) bool
	}{
		{ratelimit.Layer, resilience.RateLimiter(), map[string]string{
			"instances.Svc.rateLimiter.permits": "1", "instances.Svc.rateLimiter.period": "1s"},
			func(reg *resilience.Registry) bool {
				return lookup[*ratelimit.Limiter](t, reg, ratelimit.Layer, "Svc").Config().Shadow
			}},
		{bulkhead.Layer, resilience.Bulkhead(), map[string]string{"instances.Svc.bulkhead.maxConcurrent": "1"},
			func(reg *resilience.Registry) bool {
				return lookup[*bulkhead.Bulkhead](t, reg, bulkhead.Layer, "Svc").Config().Shadow
			}},
		{circuitbreaker.Layer, resilience.CircuitBreaker(), map[string]string{"instances.Svc.circuitBreaker.minimumCalls": "1"},
			func(reg *resilience.Registry) bool {
				return lookup[*circuitbreaker.Breaker](t, reg, circuitbreaker.Layer, "Svc").Config().Shadow
			}},
		{adaptivelimit.Layer, resilience.AdaptiveLimit(), map[string]string{"instances.Svc.adaptiveLimit.maxWait": "0s"},
			func(reg *resilience.Registry) bool {
				return lookup[*adaptivelimit.Limiter](t, reg, adaptivelimit.Layer, "Svc").Config().Shadow
			}},
	} {
		t.Run(string(tc.layer), func(t *testing.T) {
			var rec contracttest.Recorder
			reg, _ := newRegistry(t, resilience.WithProperties(tc.props), resilience.WithEventListener(rec.Listen))
			call, err := resilience.Wrap(reg, "Svc", ok, tc.spec)
			require.NoError(t, err)
			_, err = call(context.Background())
			require.NoError(t, err)
			key := "instances.Svc." + string(tc.layer) + ".shadow"
			require.NoError(t, reg.Reload(with(tc.props, map[string]string{key: "true"})))
			assert.True(t, tc.shadow(reg))
			require.NoError(t, reg.Reload(tc.props))
			assert.False(t, tc.shadow(reg))
			assert.Equal(t, map[string][][]string{"Svc": {{"shadow"}, {"shadow"}}}, changes(&rec))
		})
	}
}

// SPEC SH-4: a running adaptive limit takes a change of shadow alone live, from an
// instance's key or the defaults', whatever its algorithm and other settings.
func TestSH4_AdaptiveLimitShadowLiveWithAnySettings(t *testing.T) {
	for _, props := range []map[string]string{
		{"instances.Svc.adaptiveLimit.algorithm": "aimd"},
		{"instances.Svc.adaptiveLimit.algorithm": "aimd", "instances.Svc.adaptiveLimit.latencyThreshold": "2s"},
		{"instances.Svc.adaptiveLimit.algorithm": "gradient2", "instances.Svc.adaptiveLimit.smoothing": "0.3"},
		{"instances.Svc.adaptiveLimit.algorithm": "vegas"},
		{"instances.Svc.adaptiveLimit.enabled": "false"},
		{"instances.Svc.adaptiveLimit.priorityReserve": "0.3", "instances.Svc.adaptiveLimit.initialLimit": "7"},
		{"defaults.adaptiveLimit.algorithm": "aimd"},
	} {
		reg, _ := newRegistry(t, resilience.WithProperties(props))
		call, err := resilience.Wrap(reg, "Svc", ok, resilience.AdaptiveLimit())
		require.NoError(t, err)
		_, _ = call(context.Background())
		key := "instances.Svc.adaptiveLimit.shadow"
		require.NoError(t, reg.Reload(with(props, map[string]string{key: "true"})), "%v", props)
		require.True(t, lookup[*adaptivelimit.Limiter](t, reg, adaptivelimit.Layer, "Svc").Config().Shadow)
		require.NoError(t, reg.Reload(with(props, map[string]string{"defaults.adaptiveLimit.shadow": "false"})), "%v", props)
		require.NoError(t, reg.Reload(with(props, map[string]string{"defaults.adaptiveLimit.shadow": "true"})), "%v", props)
		require.True(t, lookup[*adaptivelimit.Limiter](t, reg, adaptivelimit.Layer, "Svc").Config().Shadow)
	}
}
