package policy_test

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/fallback"
	"github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
)

// SPEC RG-4: a layer's name is its configuration segment.
func TestLayer_RG4_String(t *testing.T) {
	for l, want := range map[policy.Layer]string{
		fallback.Layer:        "fallback",
		retry.Layer:           "retry",
		circuitbreaker.Layer:  "circuitBreaker",
		ratelimit.Layer:       "rateLimiter",
		timeout.Layer:         "timeout",
		bulkhead.Layer:        "bulkhead",
		hedge.Layer:           "hedge",
		adaptivelimit.Layer:   "adaptiveLimit",
		policy.Layer("cache"): "cache",
	} {
		assert.Equal(t, want, string(l))
		assert.Equal(t, want, fmt.Sprint(l))
	}
}

func TestEventKind_String(t *testing.T) {
	for k, want := range map[policy.EventKind]string{
		ratelimit.EventRejected:        "RateLimiterRejected",
		ratelimit.EventWaited:          "RateLimiterWaited",
		retry.EventAttempt:             "RetryAttempt",
		retry.EventExhausted:           "RetryExhausted",
		circuitbreaker.EventTransition: "CircuitBreakerTransition",
		circuitbreaker.EventRejected:   "CircuitBreakerRejected",
		timeout.EventExceeded:          "TimeoutExceeded",
		bulkhead.EventRejected:         "BulkheadRejected",
		bulkhead.EventWaited:           "BulkheadWaited",
		fallback.EventApplied:          "FallbackApplied",
		hedge.EventHedged:              "Hedged",
		hedge.EventWon:                 "HedgeWon",
		hedge.EventSkipped:             "HedgeSkipped",
		hedge.EventFailed:              "HedgeFailed",
		adaptivelimit.EventChanged:     "AdaptiveLimitChanged",
		adaptivelimit.EventRejected:    "AdaptiveLimitRejected",
		adaptivelimit.EventWaited:      "AdaptiveLimitWaited",
		policy.ConfigChanged:           "ConfigChanged",
		0:                              "EventKind(0)",
		99:                             "EventKind(99)",
	} {
		assert.Equal(t, want, k.String())
	}
}

func TestEvent_String(t *testing.T) {
	for _, tc := range []struct {
		e    policy.Event
		want string
	}{
		{policy.Event{Kind: ratelimit.EventRejected, Instance: "SearchAPI.Search", At: time.Second,
			Wait: 100 * time.Millisecond, Err: errors.New("rate limit exceeded")},
			"RateLimiterRejected SearchAPI.Search at=1s wait=100ms err=rate limit exceeded"},
		{policy.Event{Kind: ratelimit.EventWaited, Instance: "geocode", At: 0, Wait: time.Millisecond},
			"RateLimiterWaited geocode at=0s wait=1ms"},
		{policy.Event{Kind: retry.EventAttempt, Instance: "r", At: 2 * time.Second, Attempt: 2, Wait: 500 * time.Millisecond, Err: errors.New("boom")},
			"RetryAttempt r at=2s attempt=2 wait=500ms err=boom"},
		{policy.Event{Kind: circuitbreaker.EventTransition, Instance: "cb", At: time.Minute,
			Attrs: policy.EventAttrs{slog.String("from", "closed"), slog.String("to", "open")}},
			"CircuitBreakerTransition cb at=1m0s from=closed to=open"},
		{policy.Event{Kind: fallback.EventApplied, Instance: "f"},
			"FallbackApplied f at=0s"},
		{policy.Event{Kind: adaptivelimit.EventChanged, Instance: "a", At: time.Second, Attrs: policy.EventAttrs{slog.Int("limit", 24), slog.Int("previous_limit", 20)}},
			"AdaptiveLimitChanged a at=1s limit=24 previous_limit=20"},
		{policy.Event{Kind: hedge.EventHedged, Instance: "h", Attempt: 2, Wait: time.Second},
			"Hedged h at=0s attempt=2 wait=1s"},
		{policy.Event{Kind: backend.EventFailed, Instance: "geocoding", At: time.Second, Attrs: policy.EventAttrs{slog.String("node", "10.0.0.2:6379")},
			Err: errors.New("i/o timeout")},
			"RateLimiterBackendFailed geocoding at=1s node=10.0.0.2:6379 err=i/o timeout"},
	} {
		assert.Equal(t, tc.want, tc.e.String())
	}
}
