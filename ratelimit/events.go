package ratelimit

import (
	"log/slog"

	"github.com/resilience4go/resilience4go/policy"
)

// The kinds of event a rate limiter, keyed or not, and its shared backend publish. An
// admitted call that did not wait publishes nothing.
var (
	// EventRejected ("RateLimiterRejected"): a call found no permit within maxWait (Err
	// is the rejection, RetryAfter the time until a permit would be free; Key the key,
	// for a keyed limiter). Logged as a warning; span event
	// "resilience.rate_limiter.rejected".
	EventRejected = policy.RegisterEventKind(policy.EventKindInfo{Name: "RateLimiterRejected",
		Layer: Layer, Level: slog.LevelWarn, SpanEvent: "resilience.rate_limiter.rejected"})
	// EventWaited ("RateLimiterWaited"): a call reserved a permit and waits Wait for it
	// (Key the key, for a keyed limiter). Logged at debug level; span event
	// "resilience.rate_limiter.waited".
	EventWaited = policy.RegisterEventKind(policy.EventKindInfo{Name: "RateLimiterWaited",
		Layer: Layer, Level: slog.LevelDebug, SpanEvent: "resilience.rate_limiter.waited"})
	// EventBackendFailed ("RateLimiterBackendFailed"): a limiter's shared backend (e.g.
	// Redis), or the node of it named by the attribute "node" (a string), failed or
	// answered too late (Err says how); the limiters whose keys live there apply their
	// failure policy until it answers again. For Redis, the node is the address
	// (host:port) of the server, or of the cluster node that owns the key's slot, as the
	// client names it (a Sentinel failover client names itself "FailoverClient"); the
	// event has no node when the backend cannot name one (e.g. a cluster whose slot map
	// was never loaded). Key is the client's key, for a keyed limiter. Logged as an error;
	// no span event.
	EventBackendFailed = policy.RegisterEventKind(policy.EventKindInfo{Name: "RateLimiterBackendFailed",
		Layer: Layer, Level: slog.LevelError, Attrs: []policy.EventAttr{{Key: AttrNode}}})
	// EventBackendRecovered ("RateLimiterBackendRecovered"): a limiter's shared backend,
	// or the node of it named by the attribute "node", answers again after
	// EventBackendFailed; the limiters whose keys live there use it from this call on.
	// Logged at info level; no span event.
	EventBackendRecovered = policy.RegisterEventKind(policy.EventKindInfo{Name: "RateLimiterBackendRecovered",
		Layer: Layer, Level: slog.LevelInfo, Attrs: []policy.EventAttr{{Key: AttrNode}}})
	// EventBackendKeyFailed ("RateLimiterBackendKeyFailed"): the shared backend answered
	// for one key with a data error (e.g. the key holds a value of another type). Key is
	// the key as the backend stores it (e.g. the Redis key, which holds the limiter's id,
	// and the client's key for a keyed limiter), Err the error. Only that key's calls
	// apply the limiter's failure policy; the backend stays in use for every other key.
	// Logged as an error; no span event.
	EventBackendKeyFailed = policy.RegisterEventKind(policy.EventKindInfo{Name: "RateLimiterBackendKeyFailed",
		Layer: Layer, Level: slog.LevelError})
)

// AttrNode is the key of the attribute of EventBackendFailed and EventBackendRecovered
// that names the backend's node.
const AttrNode = "node"

// NodeAttrs returns the attributes of EventBackendFailed and EventBackendRecovered for
// node: none for "" (the backend could not name its node).
func NodeAttrs(node string) policy.EventAttrs {
	if node == "" {
		return policy.EventAttrs{}
	}
	return policy.EventAttrs{slog.String(AttrNode, node)}
}
