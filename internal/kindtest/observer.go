package kindtest

import (
	"context"
	"sync"

	"github.com/resilience4go/resilience4go/policy"
)

// Observer is a policy.Observer that keeps, per instance, every outcome and event its
// recorder is given, with the context it came with. Its zero value is ready to use: set
// it as a policy's or a registry's observer. It is safe for concurrent use.
type Observer struct {
	mu   sync.Mutex
	recs map[ObservedKey]*Observed
	// Order lists the instances in the order their recorders were made.
	Order []ObservedKey
}

// ObservedKey names an instance: its layer and id.
type ObservedKey struct {
	Layer policy.Layer
	ID    string
}

// Instrument returns the recorder of the instance (layer, id), made on first use.
func (o *Observer) Instrument(layer policy.Layer, id string) policy.Recorder {
	return o.Of(layer, id)
}

// Of returns the recorder of the instance (layer, id), made on first use.
func (o *Observer) Of(layer policy.Layer, id string) *Observed {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := ObservedKey{layer, id}
	if o.recs == nil {
		o.recs = map[ObservedKey]*Observed{}
	}
	r, ok := o.recs[k]
	if !ok {
		r = &Observed{}
		o.recs[k] = r
		o.Order = append(o.Order, k)
	}
	return r
}

// Made reports whether the recorder of (layer, id) was asked for.
func (o *Observer) Made(layer policy.Layer, id string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.recs[ObservedKey{layer, id}]
	return ok
}

// Observed is one instance's recorder: it keeps what it is given, oldest first.
type Observed struct {
	mu       sync.Mutex
	outcomes []policy.Outcome
	events   []policy.Event
	ctxs     []context.Context // the context of each outcome
	evCtxs   []context.Context // the context of each event
}

// Record keeps o and ctx.
func (r *Observed) Record(ctx context.Context, o policy.Outcome) {
	r.mu.Lock()
	r.outcomes = append(r.outcomes, o)
	r.ctxs = append(r.ctxs, ctx)
	r.mu.Unlock()
}

// Event keeps e and ctx.
func (r *Observed) Event(ctx context.Context, e policy.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.evCtxs = append(r.evCtxs, ctx)
	r.mu.Unlock()
}

// Outcomes returns a copy of the outcomes kept so far.
func (r *Observed) Outcomes() []policy.Outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]policy.Outcome(nil), r.outcomes...)
}

// Results returns the Result of each outcome kept so far.
func (r *Observed) Results() []policy.Result {
	var out []policy.Result
	for _, o := range r.Outcomes() {
		out = append(out, o.Result)
	}
	return out
}

// Contexts returns the context of each outcome kept so far.
func (r *Observed) Contexts() []context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]context.Context(nil), r.ctxs...)
}

// Events returns a copy of the events kept so far.
func (r *Observed) Events() []policy.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]policy.Event(nil), r.events...)
}

// EventContexts returns the context of each event kept so far.
func (r *Observed) EventContexts() []context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]context.Context(nil), r.evCtxs...)
}
