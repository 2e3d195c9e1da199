package fallback

import (
	"log/slog"

	"github.com/resilience4go/resilience4go/internal/contract"
)

// EventApplied ("FallbackApplied") is the kind of event a fallback publishes when it
// replaced the error Err. Logged at info level; span event
// "resilience.fallback.applied".
var EventApplied = contract.RegisterEvent(Layer, "FallbackApplied", slog.LevelInfo)
