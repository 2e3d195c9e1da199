package policy

import (
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
)

// EventKindInfo describes a kind of event: its name, the layer that publishes it, the
// level it is logged at, the span event it makes and the attributes it carries. A policy
// package registers one per kind with RegisterEventKind, so that logs (Event.LogValue,
// resilienceslog) and traces (resilienceotel) show its events without knowing the
// policy.
type EventKindInfo struct {
	// Name names the kind, as its String does and as logs show it, e.g.
	// "BulkheadRejected". It should be unique; an empty Name reads "EventKind(n)".
	Name string
	// Layer is the layer whose policy publishes the kind; "" for a kind any layer may
	// publish (ConfigChanged).
	Layer Layer
	// Level is the level its events are logged at. The zero value is slog.LevelInfo.
	Level slog.Level
	// LevelOf, when not nil, returns the level of an event of the kind, instead of Level:
	// for a kind whose level depends on what happened (a breaker's transition is a
	// warning when the breaker enters a state that refuses calls). It must be quick, and
	// safe for concurrent use.
	LevelOf func(Event) slog.Level
	// SpanEvent is the name of the trace span event that stands for an event of the kind,
	// e.g. "resilience.bulkhead.rejected"; "" for a kind that makes none.
	SpanEvent string
	// Attrs are the attributes of the kind's own that its events carry in Event.Attrs, in
	// that order: at most three, the length of EventAttrs (an event has room for no
	// more).
	Attrs []EventAttr
}

// EventAttr describes an attribute of a kind's own.
type EventAttr struct {
	// Key is the attribute's key, in Event.Attrs, in logs and on span events, e.g. "to".
	Key string
	// SpanValue, when not nil, converts the attribute's value for span events, e.g. to
	// the snake_case form the metrics give a state; nil: span events carry it as it is.
	// It must be safe for concurrent use.
	SpanValue func(slog.Value) slog.Value
}

// eventKinds are the registered kinds' descriptions, by kind (index 0, no kind, is nil).
// Registering copies the slice, so that readers load it without a lock.
var eventKinds struct {
	mu   sync.Mutex
	list atomic.Pointer[[]*EventKindInfo]
}

// RegisterEventKind registers a kind of event described by info and returns it. A
// policy package registers its kinds once, as package variables (e.g. var EventRejected
// = policy.RegisterEventKind(...)); so may a policy of the user's own, whose events are
// then logged and traced as the built-in ones are. Each call registers a new kind, even
// for an info registered before. It is safe for concurrent use.
func RegisterEventKind(info EventKindInfo) EventKind {
	info.Attrs = slices.Clone(info.Attrs)
	eventKinds.mu.Lock()
	defer eventKinds.mu.Unlock()
	list := []*EventKindInfo{nil}
	if old := eventKinds.list.Load(); old != nil {
		list = slices.Clone(*old)
	}
	list = append(list, &info)
	eventKinds.list.Store(&list)
	return EventKind(len(list) - 1)
}

// info returns k's description; nil for a kind that is not registered.
func (k EventKind) info() *EventKindInfo {
	if l := eventKinds.list.Load(); l != nil && k > 0 && int(k) < len(*l) {
		return (*l)[k]
	}
	return nil
}

// Info returns what k was registered with; the zero EventKindInfo for a kind that is not
// registered. Its Attrs are shared: they must not be modified.
func (k EventKind) Info() EventKindInfo {
	if info := k.info(); info != nil {
		return *info
	}
	return EventKindInfo{}
}

// String returns the kind's name, e.g. "RateLimiterRejected"; "EventKind(n)" for a kind
// that is not registered or has no name.
func (k EventKind) String() string {
	if info := k.info(); info != nil && info.Name != "" {
		return info.Name
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}
