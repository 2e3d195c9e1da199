// Package recording is what the layers read of a observe.Recorder beyond its methods: the
// optional methods by which it says what it has no use for (observe.Recorder's
// documentation describes them to observer authors).
package recording

import (
	"context"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// Untimed is implemented by a Recorder that has no use for latencies. When Untimed
// returns true (it is asked once, when the recorder is made), the layers that would read
// their clock only to measure a latency for it do not, and its outcomes have Latency 0:
// an observer that only counts then costs no clock reads.
type Untimed interface {
	Untimed() bool
}

// EventFilter is implemented by a Recorder that has use for some events only. Before a
// layer builds an event that no listener receives, it may ask WantsEvent, with the
// context of the call the event would be about, and then build none when it returns
// false. WantsEvent must be quick and safe for concurrent use. A recorder that does not
// implement EventFilter is given every event.
type EventFilter interface {
	WantsEvent(ctx context.Context, k policy.EventKind) bool
}

// KeyFilter is implemented by a Recorder that may have no use for a keyed limiter's keys.
// When WantsKeys returns false (it is asked once, when the recorder is made), its
// outcomes have no Key, and a keyed limiter does not format a key that is not a string
// for it.
type KeyFilter interface {
	WantsKeys() bool
}

// Timed reports whether rec wants latencies: it is not nil, and does not implement
// Untimed or its Untimed returns false.
func Timed(rec observe.Recorder) bool {
	if rec == nil {
		return false
	}
	u, ok := rec.(Untimed)
	return !ok || !u.Untimed()
}
