package contract

import (
	"errors"
	"fmt"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// Metrics declares what a policy type measures: its instruments, how the outcomes and
// events its instances record update them, and how an instance's snapshot is read for the
// others. A metrics exporter (resilienceotel) makes the instruments once and keeps the
// counts of each instance; it names no policy. The zero value measures nothing.
type Metrics struct {
	// Instruments are every instrument of the policy type, each name unique among all
	// policy types (e.g. "resilience.bulkhead.calls").
	Instruments []Instrument
	// Admissions, when set, counts the calls the layer admits and rejects.
	Admissions *Admissions
	// Outcomes, when set, counts the calls that end at the layer, by class.
	Outcomes *Outcomes
	// Transitions, when set with Outcomes, counts the moves from one state to another
	// that an event of the layer reports.
	Transitions *Transitions
}

// MaxClasses is the most classes an Outcomes has.
const MaxClasses = 8

// InstrumentKind is how an instrument reports its values.
type InstrumentKind uint8

// The kinds of instruments.
const (
	// Counter is an observable int64 counter: a monotonic count read at each collection.
	Counter InstrumentKind = iota + 1
	// UpDown is an observable int64 up-down counter: a count that may go down.
	UpDown
	// Gauge is an observable float64 gauge.
	Gauge
	// Histogram is a float64 histogram of durations, in seconds, recorded on the call's
	// path.
	Histogram
)

// Instrument is one instrument of a policy type. The attribute instance, the instance's
// id, is on every series; the recorder's shapes add their own (see Admissions, Outcomes,
// Transitions).
type Instrument struct {
	Name        string         // e.g. "resilience.rate_limiter.calls"
	Unit        string         // UCUM, e.g. "{call}", "%", "1"; "s" for a Histogram
	Description string         // one sentence that says what it reports
	Kind        InstrumentKind // how it reports
	// Key and Values split each instance's series of an instrument read from snapshots
	// by the attribute Key, one series per value (e.g. a breaker's state); empty: one
	// series per instance.
	Key    string
	Values []string
	// Read returns the value of the series of Values index series (0 when Values is
	// empty) from an instance's state, as the kind's Snapshot returns it, and false when
	// the series has no point now; nil for an instrument the recorder updates. An
	// integer instrument's value is the float64 of an integer.
	Read func(state any, series int) (float64, bool)
}

// Admissions is the shape of a layer that admits or rejects calls (observe.ResultAdmitted,
// observe.ResultRejected): the counter Calls by the attribute outcome, admitted or
// rejected; the counter Waited of the admitted calls that waited; the histogram Wait of
// their waits.
type Admissions struct {
	Calls  string // the Counter of admitted and rejected calls
	Waited string // the Counter of admitted calls that waited; "": none
	Wait   string // the Histogram of the waits of the calls that waited; "": none
	// Keyed: a keyed instance's calls make series of their own per client key (the
	// attribute key) when the exporter is asked for them.
	Keyed bool
}

// Outcomes is the shape of a layer that records how calls ended: the counter Calls by
// the attribute Attr, one series per class; the counter Attempts, to which each counted
// call adds its attempts; the counter Slow of the slow calls of the classes that have a
// Slow series; the histogram Duration of the latencies of the Timed classes. A call
// whose outcome is in no class is not counted.
type Outcomes struct {
	Calls    string  // the Counter of calls, by class
	Attr     string  // the attribute that names the class, e.g. "outcome"
	Classes  []Class // the classes; at most one for a result and a Retried
	Attempts string  // the Counter of attempts; "": none
	Slow     string  // the Counter of slow calls, by class; "": none
	Duration string  // the Histogram of latencies, by class; "": none
}

// Class is one class of calls of an Outcomes: those that ended with Result, and with
// attempts as Retried says.
type Class struct {
	Value   string         // the attribute value, e.g. "succeeded" or "not_permitted"
	Result  observe.Result // the result of its calls
	Retried Retried        // which attempts its calls made
	Slow    bool           // its slow calls are counted in Outcomes.Slow
	Timed   bool           // its latencies are recorded in Outcomes.Duration
}

// Retried tells classes of calls with the same result apart by their attempts.
type Retried uint8

// The values of Retried.
const (
	AnyAttempts  Retried = iota // any number of attempts
	FirstAttempt                // one attempt at most
	Retries                     // more than one attempt
)

// Transitions counts an instance's moves between states, which events of kind Kind
// report: the counter Counter by the attributes from and to, whose values are States.
type Transitions struct {
	Counter string           // the Counter of transitions
	Kind    policy.EventKind // the kind of the events that report them
	States  []string         // the values of the attributes from and to, by state index
	// Of returns the indexes in States of the states an event of kind Kind left and
	// entered; false when it names none of them.
	Of func(policy.Event) (from, to int, ok bool)
}

// Check reports whether m is consistent: its instruments have names, kinds and units
// (a Histogram's "s"), it has one shape at most (Admissions or Outcomes, with
// Transitions only beside Outcomes), and its shapes name instruments of the right kinds
// that it declares. A nil m is consistent.
func (m *Metrics) Check() error {
	if m == nil {
		return nil
	}
	byName := map[string]InstrumentKind{}
	var errs []error
	for _, in := range m.Instruments {
		switch {
		case in.Name == "" || in.Unit == "" || in.Kind < Counter || in.Kind > Histogram:
			errs = append(errs, fmt.Errorf("instrument %q: a name, a unit and a kind are needed", in.Name))
		case in.Kind == Histogram && (in.Unit != "s" || in.Read != nil):
			errs = append(errs, fmt.Errorf("instrument %q: a histogram is in seconds and read by no snapshot", in.Name))
		case byName[in.Name] != 0:
			errs = append(errs, fmt.Errorf("instrument %q declared twice", in.Name))
		}
		byName[in.Name] = in.Kind
	}
	need := func(name string, k InstrumentKind, optional bool) {
		if name == "" && optional {
			return
		}
		if byName[name] != k {
			errs = append(errs, fmt.Errorf("instrument %q: not declared, or not of kind %d", name, k))
		}
	}
	if a := m.Admissions; a != nil {
		need(a.Calls, Counter, false)
		need(a.Waited, Counter, true)
		need(a.Wait, Histogram, true)
	}
	if o := m.Outcomes; o != nil {
		need(o.Calls, Counter, false)
		need(o.Attempts, Counter, true)
		need(o.Slow, Counter, true)
		need(o.Duration, Histogram, true)
		if o.Attr == "" || len(o.Classes) == 0 || len(o.Classes) > MaxClasses {
			errs = append(errs, fmt.Errorf("outcomes: an attribute and 1 to %d classes are needed", MaxClasses))
		}
		for _, c := range o.Classes {
			if c.Value == "" || c.Result == 0 || c.Result >= 8 {
				errs = append(errs, fmt.Errorf("outcomes: class %q: a value and a result are needed", c.Value))
			}
		}
	}
	if m.Admissions != nil && m.Outcomes != nil {
		errs = append(errs, errors.New("admissions and outcomes: one shape at most"))
	}
	if m.Transitions != nil && m.Outcomes == nil {
		errs = append(errs, errors.New("transitions: counted only with outcomes"))
	}
	if t := m.Transitions; t != nil {
		need(t.Counter, Counter, false)
		if t.Of == nil || len(t.States) == 0 {
			errs = append(errs, errors.New("transitions: states and Of are needed"))
		}
	}
	return errors.Join(errs...)
}

// AdmissionInstruments is the table of the instruments of a layer that admits and
// rejects calls (see Admissions), whose names all begin with Prefix: first one UpDown
// instrument per Level, read from an instance's state of type S (its Snapshot), then the
// Counter Prefix+"calls" and, when described, the Counter Prefix+"waited_calls" and the
// Histogram Prefix+"wait.duration" (see Metrics).
type AdmissionInstruments[S any] struct {
	Prefix string     // e.g. "resilience.rate_limiter."
	Levels []Level[S] // the instruments read from the state, in order
	Calls  string     // the description of the Counter of the calls decided on
	Waited string     // the description of the Counter of the calls admitted after a wait; "": none
	Wait   string     // the description of the Histogram of their waits; "": none
	Keyed  bool       // see Admissions.Keyed
	// Shed, when set, describes the Counter Prefix+"shed_calls" of the calls shed for
	// their priority, one series per priority (the attribute priority, its name), read
	// from the state with ShedOf. "": none.
	Shed   string
	ShedOf func(S) [policy.PriorityCriticalPlus + 1]int64
	// Shadow, when set, describes the Counter Prefix+"shadow_rejections" of the calls an
	// instance in shadow mode let through that it would have rejected, read from the
	// state with ShadowOf. "": none.
	Shadow   string
	ShadowOf func(S) uint64
}

// A Level is an UpDown instrument of an AdmissionInstruments, whose value is Of the
// instance's state.
type Level[S any] struct {
	Name        string // the name after the table's Prefix, e.g. "queued_calls"
	Unit        string // e.g. "{call}"
	Description string
	Of          func(S) int
}

// Metrics returns the Metrics the table declares, its Admissions naming its Counters and
// Histogram.
func (a AdmissionInstruments[S]) Metrics() *Metrics {
	m := &Metrics{Admissions: &Admissions{Calls: a.Prefix + "calls", Keyed: a.Keyed}}
	for _, l := range a.Levels {
		m.Instruments = append(m.Instruments, Instrument{Name: a.Prefix + l.Name, Unit: l.Unit,
			Kind: UpDown, Description: l.Description, Read: readInt(l.Of)})
	}
	m.Instruments = append(m.Instruments, Instrument{Name: m.Admissions.Calls, Unit: "{call}",
		Kind: Counter, Description: a.Calls})
	if a.Waited != "" {
		m.Admissions.Waited = a.Prefix + "waited_calls"
		m.Instruments = append(m.Instruments, Instrument{Name: m.Admissions.Waited, Unit: "{call}",
			Kind: Counter, Description: a.Waited})
	}
	if a.Shed != "" {
		m.Instruments = append(m.Instruments, Instrument{Name: a.Prefix + "shed_calls", Unit: "{call}",
			Kind: Counter, Description: a.Shed, Key: "priority", Values: priorityNames(),
			Read: func(state any, series int) (float64, bool) {
				s, ok := state.(S)
				if !ok {
					return 0, false
				}
				return float64(a.ShedOf(s)[series]), true
			}})
	}
	if a.Shadow != "" {
		m.Instruments = append(m.Instruments, ShadowInstrument(a.Prefix, a.Shadow, a.ShadowOf))
	}
	if a.Wait != "" {
		m.Admissions.Wait = a.Prefix + "wait.duration"
		m.Instruments = append(m.Instruments, Instrument{Name: m.Admissions.Wait, Unit: "s",
			Kind: Histogram, Description: a.Wait})
	}
	return m
}

// readInt returns the Read of an instrument that reports of of an instance's state, of
// type S; it has no point for a state of another type.
func readInt[S any](of func(S) int) func(any, int) (float64, bool) {
	return func(state any, _ int) (float64, bool) {
		s, ok := state.(S)
		return float64(of(s)), ok
	}
}

// priorityNames returns the names of the priorities, from policy.PrioritySheddable up.
func priorityNames() []string {
	var names []string
	for p := policy.PrioritySheddable; p <= policy.PriorityCriticalPlus; p++ {
		names = append(names, p.String())
	}
	return names
}
