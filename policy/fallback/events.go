package fallback

import (
	"log/slog"

	"github.com/resilience4go/resilience4go/internal/kind"
)

// EventApplied ("FallbackApplied") is the kind of event a fallback publishes when it
// replaced the error Err. Logged at info level; span event
// "resilience.fallback.applied".
var EventApplied = kind.RegisterEvent(Layer, "FallbackApplied", slog.LevelInfo)
