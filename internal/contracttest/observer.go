package contracttest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// Observer is a observe.Observer that keeps, per instance, every outcome and event its
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
func (o *Observer) Instrument(layer policy.Layer, id string) observe.Recorder {
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
	outcomes []observe.Outcome
	events   []policy.Event
	ctxs     []context.Context // the context of each outcome
	evCtxs   []context.Context // the context of each event
}

// Record keeps o and ctx.
func (r *Observed) Record(ctx context.Context, o observe.Outcome) {
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
func (r *Observed) Outcomes() []observe.Outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]observe.Outcome(nil), r.outcomes...)
}

// Results returns the Result of each outcome kept so far.
func (r *Observed) Results() []observe.Result {
	var out []observe.Result
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

// markKey keys the marker a test puts in a call's context.
type markKey struct{}

// Mark returns a child of parent that carries the marker m, by which a test knows again,
// in what a recorder was given, the context of the call it made with it.
func Mark(parent context.Context, m string) context.Context {
	return context.WithValue(parent, markKey{}, m)
}

// Marked returns context.Background() marked with m.
func Marked(m string) context.Context { return Mark(context.Background(), m) }

// MarkedContext returns context.Background() marked with "marker".
func MarkedContext() context.Context { return Marked("marker") }

// MarkOf returns the marker ctx carries: the string Mark put there, nil for a context
// that carries none, and "nil context" for a nil ctx.
func MarkOf(ctx context.Context) any {
	if ctx == nil {
		return "nil context"
	}
	return ctx.Value(markKey{})
}

// Markers returns MarkOf of each context, in order: a slice as long as ctxs.
func Markers(ctxs []context.Context) []any {
	out := make([]any, len(ctxs))
	for i, c := range ctxs {
		out[i] = MarkOf(c)
	}
	return out
}

// RequireOutcomes checks the outcomes rec kept against want: as many (or it stops the
// test), and each equal field by field, except Err, which must be nil when want's is and
// otherwise match it by errors.Is.
func RequireOutcomes(t testing.TB, rec *Observed, want ...observe.Outcome) {
	t.Helper()
	got := rec.Outcomes()
	require.Len(t, got, len(want), "%v", got)
	for i, w := range want {
		g := got[i]
		if w.Err == nil {
			assert.NoError(t, g.Err, "outcome %d", i)
		} else {
			assert.ErrorIs(t, g.Err, w.Err, "outcome %d", i)
		}
		w.Err, g.Err = nil, nil
		assert.Equal(t, w, g, "outcome %d", i)
	}
}

// NopObserver is a observe.Observer that gives every instance a NopRecorder. It holds
// nothing, so handing it over and using its recorders allocates nothing. It is safe for
// concurrent use.
type NopObserver struct{}

// Instrument returns a NopRecorder.
func (NopObserver) Instrument(policy.Layer, string) observe.Recorder { return NopRecorder{} }

// NopRecorder is a observe.Recorder that drops every outcome and event, at no cost. It is
// safe for concurrent use.
type NopRecorder struct{}

// Record does nothing.
func (NopRecorder) Record(context.Context, observe.Outcome) {}

// Event does nothing.
func (NopRecorder) Event(context.Context, policy.Event) {}

// NilObserver is a observe.Observer that gives every instance no recorder (nil) and counts
// how often it was asked. Its zero value is ready to use; use it by pointer. It is safe
// for concurrent use.
type NilObserver struct{ asked atomic.Int64 }

// Instrument counts the request and returns nil.
func (o *NilObserver) Instrument(policy.Layer, string) observe.Recorder {
	o.asked.Add(1)
	return nil
}

// Asked returns how many times Instrument was called.
func (o *NilObserver) Asked() int { return int(o.asked.Load()) }

// CountingClock is a clock.Clock that counts the reads of its Now and passes every call
// on to the clock it wraps (a *clock.Manual or clock.System()). The count is atomic: it is
// as safe for concurrent use as the wrapped clock.
type CountingClock struct {
	clock.Clock
	reads atomic.Int64
}

// NewCountingClock returns a CountingClock over c, with no read counted.
func NewCountingClock(c clock.Clock) *CountingClock { return &CountingClock{Clock: c} }

// Now counts the read and returns the wrapped clock's Now.
func (c *CountingClock) Now() time.Duration {
	c.reads.Add(1)
	return c.Clock.Now()
}

// Reads returns how many times Now was called since the clock was made or last Reset.
func (c *CountingClock) Reads() int { return int(c.reads.Load()) }

// Reset sets the count of reads back to zero.
func (c *CountingClock) Reset() { c.reads.Store(0) }
