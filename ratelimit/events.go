package ratelimit

import (
	"log/slog"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
)

// The kinds of event a rate limiter, keyed or not, publishes (its backend's stores publish
// those of package ratelimit/backend). An admitted call that did not wait publishes
// nothing.
var (
	// EventRejected ("RateLimiterRejected"): a call found no permit within maxWait (Err
	// is the rejection, RetryAfter the time until a permit would be free; Key the key,
	// for a keyed limiter). Its attribute "shadow" (a bool, true) is there when the
	// limiter is in shadow mode (see Shadow): the call was let through, and only would
	// have been refused. Logged as a warning; span event
	// "resilience.rate_limiter.rejected".
	EventRejected = policy.RegisterEventKind(policy.EventKindInfo{Name: "RateLimiterRejected",
		Layer: Layer, Level: slog.LevelWarn, SpanEvent: contract.SpanEvent(Layer, "RateLimiterRejected"),
		Attrs: []policy.EventAttr{{Key: contract.AttrShadow}}})
	// EventWaited ("RateLimiterWaited"): a call reserved a permit and waits Wait for it
	// (Key the key, for a keyed limiter). Logged at debug level; span event
	// "resilience.rate_limiter.waited".
	EventWaited = contract.RegisterEvent(Layer, "RateLimiterWaited", slog.LevelDebug)
	// EventLimitRefused ("RateLimiterLimitRefused"): the text that a keyed limiter's
	// keyed.PerKey function gave for a key is not a limit the limiter can keep (Err is its
	// *policy.ConfigError, with its R4C code; Key the key): the key's new cell follows the
	// limiter's limit. Logged as a warning; span event "resilience.rate_limiter.refused".
	EventLimitRefused = contract.RegisterEvent(Layer, "RateLimiterLimitRefused", slog.LevelWarn)
)
