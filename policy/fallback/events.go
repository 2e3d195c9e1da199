package fallback

import (
	"log/slog"

	"github.com/resilience4go/resilience4go/policy"
)

// EventApplied ("FallbackApplied") is the kind of event a fallback publishes when it
// replaced the error Err. Logged at info level; span event
// "resilience.fallback.applied".
var EventApplied = policy.RegisterEventKind(policy.EventKindInfo{Name: "FallbackApplied",
	Layer: Layer, Level: slog.LevelInfo, SpanEvent: "resilience.fallback.applied"})
