package contracttest

import (
	"sync"

	"github.com/resilience4go/resilience4go/policy"
)

// Recorder collects the events a policy publishes, in the order they are published: pass
// its Listen method as the policy's event listener. The zero value is ready to use. It is
// safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	events []policy.Event
}

// Listen records e. It is a policy.Listener.
func (r *Recorder) Listen(e policy.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Events returns a copy of the events recorded so far, oldest first; nil when there are
// none.
func (r *Recorder) Events() []policy.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]policy.Event(nil), r.events...)
}

// Of returns the events of kind k recorded so far, oldest first; nil when there are none.
func (r *Recorder) Of(k policy.EventKind) []policy.Event {
	var out []policy.Event
	for _, e := range r.Events() {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// Count returns how many events of kind k were recorded so far.
func (r *Recorder) Count(k policy.EventKind) int {
	return len(r.Of(k))
}

// Kinds returns the kind of each event recorded so far, oldest first; nil when there are
// none.
func (r *Recorder) Kinds() []policy.EventKind {
	var out []policy.EventKind
	for _, e := range r.Events() {
		out = append(out, e.Kind)
	}
	return out
}
