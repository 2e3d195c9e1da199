package timeout

import (
	"log/slog"

	"github.com/resilience4go/resilience4go/policy"
)

// EventExceeded ("TimeoutExceeded") is the kind of event a timeout publishes when a call
// ran past its deadline: its attribute "timeout" (a duration, e.Attr("timeout")) is the
// time the call was given, Err the error it fails with. Logged as a warning; span event
// "resilience.timeout.exceeded", whose timeout is in seconds. It is published for every
// call that ran past its deadline; a recorder (a registry's observer) gets it with the
// call's context (a ConfigChanged, with context.Background()).
var EventExceeded = policy.RegisterEventKind(policy.EventKindInfo{Name: "TimeoutExceeded",
	Layer: Layer, Level: slog.LevelWarn, SpanEvent: "resilience.timeout.exceeded",
	Attrs: []policy.EventAttr{{Key: attrTimeout}}})

// attrTimeout is the key of the attribute of EventExceeded that holds the time the call
// was given.
const attrTimeout = "timeout"
