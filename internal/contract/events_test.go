package contract_test

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
)

// SPEC OB-7: a built-in kind's span event name is derived from its layer and the last
// word of its name.
func TestSpanEvent_LayerInSnakeCaseAndLastWordOfName(t *testing.T) {
	for _, c := range []struct {
		layer      policy.Layer
		name, want string
	}{
		{"rateLimiter", "RateLimiterRejected", "resilience.rate_limiter.rejected"},
		{"circuitBreaker", "CircuitBreakerTransition", "resilience.circuit_breaker.transition"},
		{"adaptiveLimit", "AdaptiveLimitWaited", "resilience.adaptive_limit.waited"},
		{"hedge", "Hedged", "resilience.hedge.hedged"},
		{"retry", "RetryAttempt", "resilience.retry.attempt"},
		{"x", "lower", "resilience.x.lower"},
	} {
		assert.Equal(t, c.want, contract.SpanEvent(c.layer, c.name), c.name)
	}
}

// SPEC OB-7: RegisterEvent registers a kind with its name, layer, level and derived span
// event, and nothing else.
func TestRegisterEvent_RegistersTheDerivedInfo(t *testing.T) {
	k := contract.RegisterEvent("cacheLayer", "CacheLayerMissed", slog.LevelWarn)
	assert.Equal(t, policy.EventKindInfo{Name: "CacheLayerMissed", Layer: "cacheLayer", Level: slog.LevelWarn,
		SpanEvent: "resilience.cache_layer.missed"}, k.Info())
}
