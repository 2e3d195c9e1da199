package chaos

import (
	"context"
	"log/slog"
	"time"

	"github.com/resilience4go/resilience4go/policy"
)

// EventInjected ("ChaosInjected") is the kind of event a chaos policy publishes for each
// injection into a call: its attribute "kind" (e.Attr("kind")) says which, "latency",
// "behavior", "result" or "error" (an injected call with a latency and an error publishes
// two, in that order). A latency's event is published as the wait begins, with Wait = the
// latency; an error's with Err = the error. Logged at info level; span event
// "resilience.chaos.injected". A recorder (a registry's observer) gets it with the
// call's context (a ConfigChanged, with context.Background()).
var EventInjected = policy.RegisterEventKind(policy.EventKindInfo{Name: "ChaosInjected",
	Layer: Layer, Level: slog.LevelInfo, SpanEvent: "resilience.chaos.injected",
	Attrs: []policy.EventAttr{{Key: attrKind}}})

// attrKind is the key of EventInjected's attribute that names what was injected.
const attrKind = "kind"

// The kinds of injection, as EventInjected, the snapshot and the metrics name them.
const (
	kindError = iota
	kindResult
	kindLatency
	kindBehavior
	numKinds
)

// kindNames are the kinds' names, by kind.
var kindNames = [numKinds]string{"error", "result", "latency", "behavior"}

// injected counts an injection of kind k into the call whose context is ctx, and
// publishes its event: wait is the latency injected, err the error injected.
func (c *Chaos) injected(ctx context.Context, k int, wait time.Duration, err error) {
	c.counts[k].Add(1)
	if c.events.Wants(ctx, EventInjected) {
		c.events.PublishCtx(ctx, policy.Event{Kind: EventInjected, Wait: wait, Err: err,
			Attrs: policy.EventAttrs{slog.String(attrKind, kindNames[k])}})
	}
}
