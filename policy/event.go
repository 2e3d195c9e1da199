package policy

import (
	"log/slog"
	"time"
)

// EventKind says what happened: an index into the kinds registered with
// RegisterEventKind, cheap to copy and compare. Its zero value is no kind. Each policy
// package declares the kinds it publishes (e.g. its EventRejected); ConfigChanged is the
// one every policy may publish.
type EventKind int

// ConfigChanged is the kind of event a running instance publishes when it took a new
// configuration (its Reconfigure, or a registry's Reload); Changed names the settings
// that changed, by their configuration attribute names (e.g. "permits", "period"), in
// sorted order. It is logged at slog.LevelInfo and makes no span event.
var ConfigChanged = RegisterEventKind(EventKindInfo{Name: "ConfigChanged", Level: slog.LevelInfo})

// EventAttrs are the attributes of an event's kind's own (see EventKindInfo.Attrs), at
// most three, in the order its kind declares them; the slots past the last one it carries
// are the zero slog.Attr (an empty Key), and are left out wherever the event is shown.
type EventAttrs [3]slog.Attr

// Event is what a policy publishes to its listener (the registry's listeners, when it is
// built through one). It is passed by value. Listeners run synchronously, on the
// goroutine where the policy decides: the caller's for a synchronous call and, for an
// asynchronous one, possibly a clock timer's or the one that completes a future. So they
// must be quick and must not call back into the policy that published it.
//
// Each field has one meaning, whatever the kind; a field that does not apply to a kind is
// its zero value. What only some kinds carry is in Attrs, declared by the kind (read one
// with Attr). The kinds' documentation, in their policy packages, says which fields and
// attributes each sets.
type Event struct {
	Kind     EventKind
	Instance string // the policy instance id: its Name, or the wrapped function's id
	// At is when the event happened, on the policy's clock: the time since that clock's
	// origin (clock.Clock.Now), not a wall-clock time. For the system clock the origin is
	// when the process first read it; for a manual clock, its start.
	At time.Duration
	// Wait is how long the call is held before it runs: for a wait for a permit or for
	// room, its length; for a retry's attempt, the delay before the next one. For a hedge,
	// the time from the call's start to the hedge's.
	Wait time.Duration
	// RetryAfter is, for a rejection, the time from At until a call could be let through:
	// a limiter's next free permit, an open breaker's remaining open time; 0 when unknown.
	RetryAfter time.Duration
	Err        error // the error involved, if any
	// Attempt is, for the events of a policy that makes several attempts, the attempt
	// concerned, from 1.
	Attempt int
	// Key is the key the event is about: for the events of a keyed limiter (its backend's
	// included), the client's key; for an event about one key of a shared backend, the key
	// as the backend stores it. Empty otherwise.
	Key string
	// Changed is, for ConfigChanged, the attribute names of the settings that changed,
	// sorted, e.g. ["period", "permits"].
	Changed []string
	// Attrs are the attributes of the kind's own, e.g. the states of a breaker's
	// transition.
	Attrs EventAttrs
}

// Attr returns the value of the attribute of e with key key; the zero slog.Value (whose
// Any is nil) when e carries none.
func (e Event) Attr(key string) slog.Value {
	for _, a := range e.Attrs {
		if a.Key == key && key != "" {
			return a.Value
		}
	}
	return slog.Value{}
}

// Level returns the level e is logged at: its kind's LevelOf(e) or, without one, its
// kind's Level; slog.LevelInfo for a kind that is not registered.
func (e Event) Level() slog.Level {
	info := e.Kind.info()
	switch {
	case info == nil:
		return slog.LevelInfo
	case info.LevelOf != nil:
		return info.LevelOf(e)
	}
	return info.Level
}

// Listener receives events. A nil Listener receives nothing and costs nothing.
type Listener func(Event)
