package resilienceotel

import (
	"fmt"
	"slices"

	"go.opentelemetry.io/otel/metric"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// The names of the instruments of whole calls (observe.LayerCall). Each policy's
// instruments are declared by the policy's package; New lists them all.
const (
	Calls        = "resilience.calls"         // observable counter, {call}: by outcome succeeded|failed|rejected (with layer)
	CallDuration = "resilience.call.duration" // histogram, s: by outcome; only with WithCallDuration
)

// The attribute keys of the series and span events. attrName, the policy instance's id,
// is on every series and span event: it is not "instance", which is the name of one of
// the labels Prometheus gives every series of a target (see targetLabels).
const (
	attrName       = "name"
	attrOutcome    = "outcome"
	attrFrom       = "from"
	attrTo         = "to"
	attrLayer      = "layer"
	attrKey        = "key"
	attrAttempt    = "attempt"
	attrWait       = "wait"
	attrRetryAfter = "retry_after"
	attrError      = "error.message"
)

// targetLabels are the labels Prometheus sets on every series of a scrape target under a
// default scrape configuration: a series' own label of one of these names is renamed
// exported_<name>. No attribute of a series may have one of these names.
var targetLabels = []string{"instance", "job"}

// checkAttr returns an error when key, an attribute a kind declares for its instrument
// name, is attrName, which every series has already, or one of targetLabels.
func checkAttr(layer policy.Layer, name, key string) error {
	switch {
	case key == attrName:
		return fmt.Errorf("resilienceotel: layer %s: instrument %s: attribute %s is the instance's", layer, name, key)
	case slices.Contains(targetLabels, key):
		return fmt.Errorf("resilienceotel: layer %s: instrument %s: attribute %s is a label Prometheus sets on every series of a target, and would be renamed exported_%s", layer, name, key, key)
	}
	return nil
}

// durationBuckets are the advised bucket boundaries of the histograms, in seconds: those
// of the OpenTelemetry semantic conventions for durations (http.server.request.duration).
// A View replaces them.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// instruments holds every instrument of a Metrics: those of whole calls, and those each
// registered policy kind declares, by layer.
type instruments struct {
	calls        metric.Int64ObservableCounter
	callDuration metric.Float64Histogram // nil unless WithCallDuration

	layers []policy.Layer                 // every layer with a kind, sorted
	kinds  map[policy.Layer]*layerMetrics // the instruments of each layer's kind; read-only after make
}

// layerMetrics is what one policy kind measures, with its instruments made.
type layerMetrics struct {
	spec   *contract.Metrics // nil: the kind measures nothing
	byName map[string]*made  // its instruments, by name
	gauges []*made           // those read from snapshots, in declaration order
}

// made is an instrument made on the meter.
type made struct {
	decl  contract.Instrument
	ints  metric.Int64Observable   // a Counter or an UpDown
	float metric.Float64Observable // a Gauge
	hist  metric.Float64Histogram  // a Histogram
}

// make makes the instruments on meter and returns the observable ones, which the
// callback reports.
func (in *instruments) make(meter metric.Meter, o options) ([]metric.Observable, error) {
	b := instrumentBuilder{meter: meter}
	in.kinds = map[policy.Layer]*layerMetrics{}
	owner := map[string]policy.Layer{Calls: observe.LayerCall, CallDuration: observe.LayerCall}
	for _, k := range contract.All() {
		in.layers = append(in.layers, k.Layer())
		lm := &layerMetrics{spec: k.Measures(), byName: map[string]*made{}}
		in.kinds[k.Layer()] = lm
		if err := lm.spec.Check(); err != nil {
			b.add(fmt.Errorf("resilienceotel: the metrics of layer %s: %w", k.Layer(), err))
			continue
		}
		if lm.spec == nil {
			continue
		}
		if o := lm.spec.Outcomes; o != nil {
			if err := checkAttr(k.Layer(), o.Calls, o.Attr); err != nil {
				b.add(err)
				continue
			}
		}
		for _, decl := range lm.spec.Instruments {
			if err := checkAttr(k.Layer(), decl.Name, decl.Key); decl.Key != "" && err != nil {
				b.add(err)
				continue
			}
			if l, dup := owner[decl.Name]; dup {
				b.add(fmt.Errorf("resilienceotel: layers %s and %s both declare instrument %s", l, k.Layer(), decl.Name))
				continue
			}
			owner[decl.Name] = k.Layer()
			mk := b.make(decl)
			lm.byName[decl.Name] = mk
			if decl.Read != nil {
				lm.gauges = append(lm.gauges, mk)
			}
		}
	}

	in.calls = b.counter(Calls, "{call}",
		"Whole calls through a wrapped function or pipeline, by outcome: succeeded, failed, or rejected with the layer that refused it.")
	if o.callDuration {
		in.callDuration = b.histogram(CallDuration,
			"How long whole calls through a wrapped function or pipeline took, by outcome.")
	}
	return b.observables, b.err
}

// instrumentBuilder makes instruments on a meter, keeping the observable ones and the
// errors.
type instrumentBuilder struct {
	meter       metric.Meter
	observables []metric.Observable
	errs
}

// make makes the instrument decl declares.
func (b *instrumentBuilder) make(decl contract.Instrument) *made {
	mk := &made{decl: decl}
	switch decl.Kind {
	case contract.Counter:
		mk.ints = b.counter(decl.Name, decl.Unit, decl.Description)
	case contract.UpDown:
		mk.ints = b.upDown(decl.Name, decl.Unit, decl.Description)
	case contract.Gauge:
		mk.float = b.gauge(decl.Name, decl.Unit, decl.Description)
	case contract.Histogram:
		mk.hist = b.histogram(decl.Name, decl.Description)
	}
	return mk
}

func (b *instrumentBuilder) counter(name, unit, desc string) metric.Int64ObservableCounter {
	c, err := b.meter.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	return kept(b, c, err)
}

func (b *instrumentBuilder) upDown(name, unit, desc string) metric.Int64ObservableUpDownCounter {
	c, err := b.meter.Int64ObservableUpDownCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	return kept(b, c, err)
}

func (b *instrumentBuilder) gauge(name, unit, desc string) metric.Float64ObservableGauge {
	g, err := b.meter.Float64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
	return kept(b, g, err)
}

// kept returns i, an observable instrument the meter made, keeping it (unless nil) for
// the callback and err among b's errors.
func kept[I metric.Observable](b *instrumentBuilder, i I, err error) I {
	b.add(err)
	if any(i) != nil {
		b.observables = append(b.observables, i)
	}
	return i
}

func (b *instrumentBuilder) histogram(name, desc string) metric.Float64Histogram {
	h, err := b.meter.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	b.add(err)
	return h
}

// counterOf returns the observable counter named name of lm; nil for "" (none).
func (lm *layerMetrics) counterOf(name string) metric.Int64Observable {
	if mk := lm.byName[name]; name != "" && mk != nil {
		return mk.ints
	}
	return nil
}

// histogramOf returns the histogram named name of lm; nil for "" (none).
func (lm *layerMetrics) histogramOf(name string) metric.Float64Histogram {
	if mk := lm.byName[name]; name != "" && mk != nil {
		return mk.hist
	}
	return nil
}
