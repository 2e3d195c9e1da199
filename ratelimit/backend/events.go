package backend

import (
	"log/slog"

	"github.com/resilience4go/resilience4go/policy"
)

// layer is the rate limiter's layer, ratelimit.Layer, which the events below belong to
// (this package cannot import ratelimit, which imports it).
const layer policy.Layer = "rateLimiter"

// The kinds of event a Store publishes through its Binding's Listener, with the limiter's
// id as Instance. The limiters of every backend publish them; their names keep the rate
// limiter's prefix.
var (
	// EventFailed ("RateLimiterBackendFailed"): a limiter's shared backend (e.g. Redis),
	// or the node of it named by the attribute "node" (a string), failed or answered too
	// late (Err says how); the limiters whose keys live there apply their failure policy
	// until it answers again. For Redis, the node is the address (host:port) of the server,
	// or of the cluster node that owns the key's slot, as the client names it (a Sentinel
	// failover client names itself "FailoverClient"); the event has no node when the
	// backend cannot name one (e.g. a cluster whose slot map was never loaded). Key is the
	// client's key, for a keyed limiter. Logged as an error; no span event.
	EventFailed = policy.RegisterEventKind(policy.EventKindInfo{Name: "RateLimiterBackendFailed",
		Layer: layer, Level: slog.LevelError, Attrs: []policy.EventAttr{{Key: "node"}}})
	// EventRecovered ("RateLimiterBackendRecovered"): a limiter's shared backend, or the
	// node of it named by the attribute "node", answers again after EventFailed; the
	// limiters whose keys live there use it from this call on. Logged at info level; no
	// span event.
	EventRecovered = policy.RegisterEventKind(policy.EventKindInfo{Name: "RateLimiterBackendRecovered",
		Layer: layer, Level: slog.LevelInfo, Attrs: []policy.EventAttr{{Key: "node"}}})
	// EventKeyFailed ("RateLimiterBackendKeyFailed"): the shared backend answered for one
	// key with a data error (e.g. the key holds a value of another type). Key is the key as
	// the backend stores it (e.g. the Redis key, which holds the limiter's id, and the
	// client's key for a keyed limiter), Err the error. Only that key's calls apply the
	// limiter's failure policy; the backend stays in use for every other key. Logged as an
	// error; no span event.
	EventKeyFailed = policy.RegisterEventKind(policy.EventKindInfo{Name: "RateLimiterBackendKeyFailed",
		Layer: layer, Level: slog.LevelError})
)
