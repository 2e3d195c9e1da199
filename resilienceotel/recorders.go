package resilienceotel

import (
	"context"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/fallback"
	"github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// counter is a count bumped by calls, alone on its cache line: the pad keeps the next
// counter, or the fields after it, off the line, so that calls bumping one counter on
// one core do not invalidate the line another core bumps another counter on, or reads
// a recorder's fixed fields from. A run of counters is preceded by a linePad.
type counter struct {
	atomic.Int64
	_ [cacheLine - 8]byte
}

// cacheLine is the size the counters are padded to, in bytes.
const cacheLine = 64

// linePad keeps the fields before a run of counters off the first counter's line.
type linePad [cacheLine - 8]byte

// nResults bounds the policy.Result values: arrays indexed by a Result (masked with
// resultMask) need no bounds check.
const (
	nResults   = 8
	resultMask = nResults - 1
)

// observeWith returns the option that reports a value with set, ready to be passed on
// without building a slice per observation.
func observeWith(kv ...attribute.KeyValue) []metric.ObserveOption {
	return []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(kv...))}
}

// recordWith is observeWith for a histogram's Record.
func recordWith(kv ...attribute.KeyValue) []metric.RecordOption {
	return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(kv...))}
}

// seconds returns d in seconds, as the histograms take it.
func seconds(d int64) float64 { return float64(d) / 1e9 }

// base is what every recorder holds: its Metrics, its instance and the options its
// Event reads. Its Event adds span events.
type base struct {
	m     *Metrics
	id    string
	inst  attribute.KeyValue // instance=id
	spans bool               // WithSpanEvents
	key   bool               // WithKeyAttribute
	timed bool               // the recorder records latencies (see Untimed)
}

// Untimed reports whether the recorder has no use for latencies (policy.Untimed): true
// but for a circuit breaker's, and a whole call's with WithCallDuration, whose
// histograms record them. The layers then read no clock for it.
func (b *base) Untimed() bool { return !b.timed }

// Event adds the span event of e, if it has one, to the span of ctx, if it records.
func (b *base) Event(ctx context.Context, e policy.Event) {
	if b.spans {
		addSpanEvent(ctx, e, b.key)
	}
}

// WantsEvent reports whether an event of kind k about the call with ctx makes a span
// event: span events are on, k has one (policy.EventKindInfo.SpanEvent), and ctx's span
// is recording (policy.EventFilter).
func (b *base) WantsEvent(ctx context.Context, k policy.EventKind) bool {
	return b.spans && k.Info().SpanEvent != "" && trace.SpanFromContext(ctx).IsRecording()
}

// WantsKeys reports whether a keyed limiter's keys are attributes: WithKeyAttribute
// (policy.KeyFilter). Without it, a limiter formats no key for the recorder.
func (b *base) WantsKeys() bool { return b.key }

// eventRec is the recorder of a layer that records no outcome (a fallback): its events
// only.
type eventRec struct{ base }

// Record does nothing: the layer records no outcome.
func (*eventRec) Record(context.Context, policy.Outcome) {}

func (*eventRec) observe(metric.Observer) {}

// admissions are the counts of a rate limiter, a bulkhead or an adaptive limit, or of
// one key of a keyed rate limiter: the calls admitted and rejected, and of the admitted
// ones those that waited.
type admissions struct {
	waitRec     []metric.RecordOption // instance (and key)
	obsAdmitted []metric.ObserveOption
	obsRejected []metric.ObserveOption
	obsInst     []metric.ObserveOption // instance (and key)
	_           linePad
	admitted    counter
	rejected    counter
	waited      counter
}

func newAdmissions(kv ...attribute.KeyValue) *admissions {
	with := func(extra ...attribute.KeyValue) []attribute.KeyValue {
		return append(append(make([]attribute.KeyValue, 0, len(kv)+len(extra)), kv...), extra...)
	}
	return &admissions{
		waitRec:     recordWith(kv...),
		obsAdmitted: observeWith(with(attribute.String(attrOutcome, "admitted"))...),
		obsRejected: observeWith(with(attribute.String(attrOutcome, "rejected"))...),
		obsInst:     observeWith(kv...),
	}
}

// limiterRec is the recorder of a rate limiter, a bulkhead or an adaptive limit.
type limiterRec struct {
	base
	calls  metric.Int64ObservableCounter
	waited metric.Int64ObservableCounter // nil: not reported (bulkhead, adaptive limit)
	wait   metric.Float64Histogram       // nil: waits are not recorded (adaptive limit)
	keyed  bool                          // each key has its admissions, in keys
	own    *admissions                   // the instance's (every call's, unless keyed)
	keys   sync.Map                      // key → *admissions, when keyed
}

func newLimiterRec(b base, calls, waited metric.Int64ObservableCounter, wait metric.Float64Histogram, keyed bool) *limiterRec {
	return &limiterRec{base: b, calls: calls, waited: waited, wait: wait, keyed: keyed, own: newAdmissions(b.inst)}
}

// Record counts an admission or a rejection, and records the wait of an admitted call
// that waited.
func (r *limiterRec) Record(ctx context.Context, o policy.Outcome) {
	a := r.own
	if r.keyed && o.Key != "" {
		a = r.keyOf(o.Key)
	}
	switch o.Result {
	case policy.ResultAdmitted:
		a.admitted.Add(1)
		if o.Wait > 0 {
			a.waited.Add(1)
			if r.wait != nil {
				r.wait.Record(orBackground(ctx), seconds(int64(o.Wait)), a.waitRec...)
			}
		}
	case policy.ResultRejected:
		a.rejected.Add(1)
	}
}

// keyOf returns the admissions of key, made on first use.
func (r *limiterRec) keyOf(key string) *admissions {
	if a, ok := r.keys.Load(key); ok {
		return a.(*admissions)
	}
	a, _ := r.keys.LoadOrStore(key, newAdmissions(r.inst, attribute.String(attrKey, key)))
	return a.(*admissions)
}

func (r *limiterRec) observe(o metric.Observer) {
	r.observeAdmissions(o, r.own)
	if r.keyed {
		r.keys.Range(func(_, a any) bool {
			r.observeAdmissions(o, a.(*admissions))
			return true
		})
	}
}

func (r *limiterRec) observeAdmissions(o metric.Observer, a *admissions) {
	o.ObserveInt64(r.calls, a.admitted.Load(), a.obsAdmitted...)
	o.ObserveInt64(r.calls, a.rejected.Load(), a.obsRejected...)
	if r.waited != nil {
		o.ObserveInt64(r.waited, a.waited.Load(), a.obsInst...)
	}
}

// orBackground returns ctx, or context.Background() for a nil ctx (a call refused for
// its nil context), so that a meter never sees a nil context.
func orBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

// breakerStates are a breaker's states, as the attribute values state, from and to name
// them: circuitbreaker.State's names in snake_case.
var breakerStates = [...]string{
	circuitbreaker.Closed:     "closed",
	circuitbreaker.Open:       "open",
	circuitbreaker.HalfOpen:   "half_open",
	circuitbreaker.Disabled:   "disabled",
	circuitbreaker.ForcedOpen: "forced_open",
}

// breakerState returns the index in breakerStates of the state that
// circuitbreaker.State.String names name; false for an unknown name.
func breakerState(name string) (int, bool) {
	for s := range circuitbreaker.State(len(breakerStates)) {
		if s.String() == name {
			return int(s), true
		}
	}
	return 0, false
}

// breakerOutcomes are the outcome values of a breaker's calls, by Result.
var breakerOutcomes = [nResults]string{
	policy.ResultSucceeded: "succeeded",
	policy.ResultFailed:    "failed",
	policy.ResultIgnored:   "ignored",
	policy.ResultRejected:  "not_permitted",
}

// breakerRec is the recorder of a circuit breaker.
type breakerRec struct {
	base
	ins      *instruments
	durRec   [nResults][]metric.RecordOption  // by outcome; nil for not_permitted
	obsCalls [nResults][]metric.ObserveOption // by outcome
	obsSlow  [nResults][]metric.ObserveOption // succeeded and failed
	_        linePad
	calls    [nResults]counter
	slow     [nResults]counter
	// moves counts the transitions, by the states left and entered; rare, so unpadded.
	moves [len(breakerStates)][len(breakerStates)]atomic.Int64
}

func newBreakerRec(b base) *breakerRec {
	r := &breakerRec{base: b, ins: &b.m.ins}
	for res, name := range breakerOutcomes {
		if name == "" {
			continue
		}
		out := attribute.String(attrOutcome, name)
		r.obsCalls[res] = observeWith(b.inst, out)
		switch policy.Result(res) {
		case policy.ResultSucceeded, policy.ResultFailed:
			r.obsSlow[res] = observeWith(b.inst, out)
		}
		if policy.Result(res) != policy.ResultRejected {
			r.durRec[res] = recordWith(b.inst, out)
		}
	}
	return r
}

// Record counts the call by outcome, and slow calls; it records the duration of a call
// that was let through.
func (r *breakerRec) Record(ctx context.Context, o policy.Outcome) {
	i := o.Result & resultMask
	r.calls[i].Add(1)
	if o.Result == policy.ResultRejected || r.durRec[i] == nil {
		return
	}
	if o.Slow {
		r.slow[i].Add(1)
	}
	r.ins.cbDuration.Record(orBackground(ctx), seconds(int64(o.Latency)), r.durRec[i]...)
}

// WantsEvent reports whether the breaker's recorder wants an event of kind k: every
// transition, which it counts, and the events that make span events.
func (r *breakerRec) WantsEvent(ctx context.Context, k policy.EventKind) bool {
	return k == circuitbreaker.EventTransition || r.base.WantsEvent(ctx, k)
}

// Event counts transitions, and adds span events.
func (r *breakerRec) Event(ctx context.Context, e policy.Event) {
	if e.Kind == circuitbreaker.EventTransition {
		from, ok1 := breakerState(e.Attr(circuitbreaker.AttrFrom).String())
		to, ok2 := breakerState(e.Attr(circuitbreaker.AttrTo).String())
		if ok1 && ok2 {
			r.moves[from][to].Add(1)
		}
	}
	r.base.Event(ctx, e)
}

func (r *breakerRec) observe(o metric.Observer) {
	for i := range r.calls {
		if r.obsCalls[i] != nil {
			o.ObserveInt64(r.ins.cbCalls, r.calls[i].Load(), r.obsCalls[i]...)
		}
		if r.obsSlow[i] != nil {
			o.ObserveInt64(r.ins.cbSlow, r.slow[i].Load(), r.obsSlow[i]...)
		}
	}
	for from := range r.moves {
		for to := range r.moves[from] {
			if n := r.moves[from][to].Load(); n > 0 {
				o.ObserveInt64(r.ins.cbTransitions, n, metric.WithAttributes(r.inst,
					attribute.String(attrFrom, breakerStates[from]), attribute.String(attrTo, breakerStates[to])))
			}
		}
	}
}

// The kinds of a retry's calls, as the attribute kind names them.
const (
	retrySucceededWithout = iota
	retrySucceededWith
	retryFailedWithout
	retryFailedWith
	retryAborted
	nRetryKinds
)

var retryKinds = [nRetryKinds]string{
	retrySucceededWithout: "succeeded_without_retry",
	retrySucceededWith:    "succeeded_with_retry",
	retryFailedWithout:    "failed_without_retry",
	retryFailedWith:       "failed_with_retry",
	retryAborted:          "aborted",
}

// retryRec is the recorder of a retry.
type retryRec struct {
	base
	ins         *instruments
	obsKinds    [nRetryKinds][]metric.ObserveOption
	obsAttempts []metric.ObserveOption
	_           linePad
	kinds       [nRetryKinds]counter
	attempts    counter
}

func newRetryRec(b base) *retryRec {
	r := &retryRec{base: b, ins: &b.m.ins, obsAttempts: observeWith(b.inst)}
	for k, name := range retryKinds {
		r.obsKinds[k] = observeWith(b.inst, attribute.String(attrKind, name))
	}
	return r
}

// Record counts the call by kind, and its attempts.
func (r *retryRec) Record(_ context.Context, o policy.Outcome) {
	var k int
	switch o.Result {
	case policy.ResultSucceeded:
		k = retrySucceededWithout
		if o.Attempts > 1 {
			k = retrySucceededWith
		}
	case policy.ResultFailed:
		k = retryFailedWithout
		if o.Attempts > 1 {
			k = retryFailedWith
		}
	case policy.ResultAborted:
		k = retryAborted
	default:
		return
	}
	r.kinds[k].Add(1)
	r.attempts.Add(int64(o.Attempts))
}

func (r *retryRec) observe(o metric.Observer) {
	for k := range r.kinds {
		o.ObserveInt64(r.ins.rtCalls, r.kinds[k].Load(), r.obsKinds[k]...)
	}
	o.ObserveInt64(r.ins.rtAttempts, r.attempts.Load(), r.obsAttempts...)
}

// outcomeRec is the recorder of a timeout or a hedge: calls by outcome and, for a
// hedge, attempts.
type outcomeRec struct {
	base
	calls       metric.Int64ObservableCounter
	attempts    metric.Int64ObservableCounter // nil: not counted (timeout)
	obsCalls    [nResults][]metric.ObserveOption
	obsAttempts []metric.ObserveOption
	_           linePad
	counts      [nResults]counter
	nAttempts   counter
}

func newOutcomeRec(b base, calls, attempts metric.Int64ObservableCounter, results ...policy.Result) *outcomeRec {
	r := &outcomeRec{base: b, calls: calls, attempts: attempts, obsAttempts: observeWith(b.inst)}
	for _, res := range results {
		r.obsCalls[res&resultMask] = observeWith(b.inst, attribute.String(attrOutcome, res.String()))
	}
	return r
}

// Record counts the call by outcome, and its attempts.
func (r *outcomeRec) Record(_ context.Context, o policy.Outcome) {
	r.counts[o.Result&resultMask].Add(1)
	if r.attempts != nil {
		r.nAttempts.Add(int64(o.Attempts))
	}
}

func (r *outcomeRec) observe(o metric.Observer) {
	for i := range r.counts {
		if r.obsCalls[i] != nil {
			o.ObserveInt64(r.calls, r.counts[i].Load(), r.obsCalls[i]...)
		}
	}
	if r.attempts != nil {
		o.ObserveInt64(r.attempts, r.nAttempts.Load(), r.obsAttempts...)
	}
}

// builtinLayers are the layers whose rejections a whole call's recorder counts without a
// map; a rejection by any other layer is counted in its map.
var builtinLayers = [...]policy.Layer{
	ratelimit.Layer, circuitbreaker.Layer, bulkhead.Layer,
	adaptivelimit.Layer, retry.Layer, hedge.Layer, timeout.Layer,
	fallback.Layer,
}

// builtinLayer returns the index of l in builtinLayers; false for another layer.
func builtinLayer(l policy.Layer) (int, bool) {
	switch l {
	case ratelimit.Layer:
		return 0, true
	case circuitbreaker.Layer:
		return 1, true
	case bulkhead.Layer:
		return 2, true
	case adaptivelimit.Layer:
		return 3, true
	case retry.Layer:
		return 4, true
	case hedge.Layer:
		return 5, true
	case timeout.Layer:
		return 6, true
	case fallback.Layer:
		return 7, true
	}
	return 0, false
}

// rejections counts one layer's rejections of whole calls, for a layer that is not
// built in.
type rejections struct {
	obs []metric.ObserveOption
	n   counter
}

// callRec is the recorder of a whole call (policy.LayerCall).
type callRec struct {
	base
	ins          *instruments
	obsSucceeded []metric.ObserveOption
	obsFailed    []metric.ObserveOption
	obsRejected  [len(builtinLayers)][]metric.ObserveOption
	durRec       [nResults][]metric.RecordOption // by outcome; nil without WithCallDuration
	others       sync.Map                        // a layer not built in → *rejections
	_            linePad
	succeeded    counter
	failed       counter
	rejected     [len(builtinLayers)]counter
}

func newCallRec(b base) *callRec {
	r := &callRec{base: b, ins: &b.m.ins,
		obsSucceeded: observeWith(b.inst, attribute.String(attrOutcome, "succeeded")),
		obsFailed:    observeWith(b.inst, attribute.String(attrOutcome, "failed")),
	}
	for i, l := range builtinLayers {
		r.obsRejected[i] = observeWith(b.inst, attribute.String(attrOutcome, "rejected"), attribute.String(attrLayer, string(l)))
	}
	if r.ins.callDuration != nil {
		for _, res := range []policy.Result{policy.ResultSucceeded, policy.ResultFailed, policy.ResultRejected} {
			r.durRec[res] = recordWith(b.inst, attribute.String(attrOutcome, res.String()))
		}
	}
	return r
}

// Record counts the call by outcome (a rejection by the layer that refused it), and
// records its duration with WithCallDuration.
func (r *callRec) Record(ctx context.Context, o policy.Outcome) {
	switch o.Result {
	case policy.ResultSucceeded:
		r.succeeded.Add(1)
	case policy.ResultFailed:
		r.failed.Add(1)
	case policy.ResultRejected:
		if i, ok := builtinLayer(o.RejectedBy); ok {
			r.rejected[i].Add(1)
		} else {
			r.otherLayer(o.RejectedBy).n.Add(1)
		}
	default:
		return
	}
	if r.ins.callDuration != nil {
		r.ins.callDuration.Record(orBackground(ctx), seconds(int64(o.Latency)), r.durRec[o.Result&resultMask]...)
	}
}

// otherLayer returns the rejections of layer l, not built in, made on first use; a
// rejection that names no layer has no attribute layer.
func (r *callRec) otherLayer(l policy.Layer) *rejections {
	if c, ok := r.others.Load(l); ok {
		return c.(*rejections)
	}
	kv := []attribute.KeyValue{r.inst, attribute.String(attrOutcome, "rejected")}
	if l != "" {
		kv = append(kv, attribute.String(attrLayer, string(l)))
	}
	c, _ := r.others.LoadOrStore(l, &rejections{obs: observeWith(kv...)})
	return c.(*rejections)
}

// observe reports succeeded and failed calls always, and rejections by each layer that
// refused at least one call.
func (r *callRec) observe(o metric.Observer) {
	o.ObserveInt64(r.ins.calls, r.succeeded.Load(), r.obsSucceeded...)
	o.ObserveInt64(r.ins.calls, r.failed.Load(), r.obsFailed...)
	for i := range r.rejected {
		if n := r.rejected[i].Load(); n > 0 {
			o.ObserveInt64(r.ins.calls, n, r.obsRejected[i]...)
		}
	}
	r.others.Range(func(_, c any) bool {
		rej := c.(*rejections)
		o.ObserveInt64(r.ins.calls, rej.n.Load(), rej.obs...)
		return true
	})
}
