// Package kind is how the registry sees a policy type: the settings its options produce,
// the configuration attributes it reads, how an instance is built and how it is compared
// and observed. Each policy package describes itself once, in a Descriptor it registers;
// package resilience works through those descriptors only.
package contract

import (
	"context"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/recording"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// Common is what every policy's options set besides the policy's own configuration. A
// policy's settings struct embeds it next to its Config.
type Common struct {
	// Name is the shared instance name: functions wrapped with the same name share one
	// instance. Empty: the instance id is the wrapped function's id.
	Name string
	// ConfigName selects the keys configs.<ConfigName>.<segment>.*.
	ConfigName string
	// InstanceID is the id of an instance built directly with the package's New; a
	// registry sets it from Name or the wrapped function's id.
	InstanceID string
	// Clock is the time source; nil means clock.System(). A registry sets its own.
	Clock clock.Clock
	// Listener receives the policy's events; nil publishes nothing.
	Listener policy.Listener
	// Observer makes the recorder of the instance's outcomes; nil records nothing. A
	// registry sets its own.
	Observer observe.Observer
}

// Base returns c itself, so that generic code reaches the Common embedded in any
// settings struct.
func (c *Common) Base() *Common { return c }

// ID returns the instance id: InstanceID if set, else Name, else orElse.
func (c *Common) ID(orElse string) string {
	switch {
	case c.InstanceID != "":
		return c.InstanceID
	case c.Name != "":
		return c.Name
	}
	return orElse
}

// ClockOrSystem returns Clock, or clock.System() when it is nil.
func (c *Common) ClockOrSystem() clock.Clock {
	if c.Clock == nil {
		return clock.System()
	}
	return c.Clock
}

// Events is how an instance publishes: its id, its clock, its listener and the recorder
// of its outcomes. Every policy embeds one and publishes and records through it.
type Events struct {
	ID       string           // the instance id, set on every event
	Clock    clock.Clock      // stamps the events published with a zero At
	Listener policy.Listener  // nil: nothing is published
	Rec      observe.Recorder // nil: no outcome is recorded
	// Timed is whether Rec wants latencies (see observe.Recorder): a layer reads its clock only
	// to measure a latency when it is set.
	Timed bool
	// Keys is whether Rec wants a keyed limiter's keys in its outcomes (see observe.Recorder).
	Keys bool
	// filter is Rec, when it says which events it wants (see observe.Recorder).
	filter recording.EventFilter
}

// EventsOf returns the publisher of an instance of layer l built from c with the id id,
// asking c's observer, if any, for the instance's recorder.
func (c *Common) EventsOf(l policy.Layer, id string) Events {
	e := Events{ID: id, Clock: c.ClockOrSystem(), Listener: c.Listener}
	if c.Observer != nil {
		e.Rec = c.Observer.Instrument(l, id)
		e.Timed = recording.Timed(e.Rec)
		e.filter, _ = e.Rec.(recording.EventFilter)
		kf, ok := e.Rec.(recording.KeyFilter)
		e.Keys = e.Rec != nil && (!ok || kf.WantsKeys())
	}
	return e
}

// Observed reports whether anyone listens or records, so that a policy can skip building
// an event.
func (p *Events) Observed() bool { return p.Listener != nil || p.Rec != nil }

// Wants reports whether an event of kind k about the call with ctx would reach anyone: a
// listener, or a recorder that wants it (see observe.Recorder). A policy on a hot path asks
// it instead of Observed, so that it builds no event that nobody takes.
func (p *Events) Wants(ctx context.Context, k policy.EventKind) bool {
	switch {
	case p.Listener != nil:
		return true
	case p.Rec == nil:
		return false
	}
	return p.filter == nil || p.filter.WantsEvent(ctx, k)
}

// Recording reports whether outcomes are recorded, so that a policy can skip reading the
// clock for a latency nobody records.
func (p *Events) Recording() bool { return p.Rec != nil }

// Publish is PublishCtx for an event no call caused: its recorder gets
// context.Background().
func (p *Events) Publish(e policy.Event) { p.PublishCtx(context.Background(), e) }

// PublishCtx sends e, caused by the call whose context is ctx, to the listener and the
// recorder, if there are any, with the instance id and, when e.At is zero, the clock's
// time now.
func (p *Events) PublishCtx(ctx context.Context, e policy.Event) {
	if p.Listener == nil && p.Rec == nil {
		return
	}
	e.Instance = p.ID
	if e.At == 0 {
		e.At = p.Clock.Now()
	}
	if p.Listener != nil {
		p.Listener(e)
	}
	if p.Rec != nil {
		p.Rec.Event(ctx, e)
	}
}

// Record gives the outcome o of the call whose context is ctx to the recorder, if there
// is one.
func (p *Events) Record(ctx context.Context, o observe.Outcome) {
	if p.Rec != nil {
		p.Rec.Record(ctx, o)
	}
}

// Settings is the constraint of a policy's settings struct S: a pointer to it reaches
// its embedded Common.
type Settings[S any] interface {
	*S
	Base() *Common
}

// Name returns the option that shares one instance among every function wrapped with
// name.
func Name[S any, PS Settings[S]](name string) func(*S) {
	return func(s *S) { PS(s).Base().Name = name }
}

// UseConfig returns the option that selects the keys configs.<name>.<segment>.*.
func UseConfig[S any, PS Settings[S]](name string) func(*S) {
	return func(s *S) { PS(s).Base().ConfigName = name }
}

// WithClock returns the option that sets the time source.
func WithClock[S any, PS Settings[S]](c clock.Clock) func(*S) {
	return func(s *S) { PS(s).Base().Clock = c }
}

// WithInstanceID returns the option that sets the id of an instance built with New.
func WithInstanceID[S any, PS Settings[S]](id string) func(*S) {
	return func(s *S) { PS(s).Base().InstanceID = id }
}

// OnEvent returns the option that sets the listener of the instance's events.
func OnEvent[S any, PS Settings[S]](l policy.Listener) func(*S) {
	return func(s *S) { PS(s).Base().Listener = l }
}

// Apply applies opts to s in order, skipping nil ones.
func Apply[S any, O ~func(*S)](s *S, opts []O) {
	for _, o := range opts {
		if o != nil {
			o(s)
		}
	}
}

// New is every policy package's New: the defaults, then opts, then build.
func New[S any, O ~func(*S), P any](defaults func() S, build func(S) (P, error), opts []O) (P, error) {
	s := defaults()
	Apply(&s, opts)
	return build(s)
}

// Observe returns the option that sets the observer that makes the instance's recorder.
func Observe[S any, PS Settings[S]](o observe.Observer) func(*S) {
	return func(s *S) { PS(s).Base().Observer = o }
}

// IDPhrase returns prefix followed by id in quotes, for an error message that names its
// instance (IDPhrase(" of ", "geo") is ` of "geo"`); "" for an instance without an id, so
// that a message never names an instance its user did not name.
func IDPhrase(prefix, id string) string {
	if id == "" {
		return ""
	}
	return prefix + `"` + id + `"`
}
