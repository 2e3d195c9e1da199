package retrybudget

import (
	"log/slog"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
)

// EventRefused ("RetryBudgetRefused") is the kind of event a retry budget publishes when
// it refuses an extra attempt: Instance is the budget's id, Attempt the attempt refused
// (2 or more), and its attributes "by_layer" and "by_instance" (e.Attr("by_layer")) the layer
// that asked ("retry" or "hedge") and that layer's instance id. The retry then ends the
// call with its last attempt's result and error, as they are (and publishes its own
// RetryAborted); the hedge skips the hedge (and publishes its own HedgeSkipped). It is
// published with the call's context, on the goroutine where the asking layer decides;
// logged as a warning; span event "resilience.retry_budget.refused".
var EventRefused = policy.RegisterEventKind(policy.EventKindInfo{Name: "RetryBudgetRefused",
	Layer: Layer, Level: slog.LevelWarn, SpanEvent: contract.SpanEvent(Layer, "RetryBudgetRefused"),
	Attrs: []policy.EventAttr{{Key: attrLayer}, {Key: attrInstance}}})

// The keys of EventRefused's attributes: the layer that asked, and its instance id.
const (
	attrLayer    = "by_layer"
	attrInstance = "by_instance"
)
