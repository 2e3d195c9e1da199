package resilience

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/recording"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// callRecorder returns the recorder of the whole calls of the composition of id, asked of
// the registry's observer; nil without an observer.
func (r *Registry) callRecorder(id string) observe.Recorder {
	if r.observer == nil {
		return nil
	}
	return r.observer.Instrument(observe.LayerCall, id)
}

// whole records the outcomes of the whole calls of one composition.
type whole struct {
	rec    observe.Recorder
	clk    clock.Clock
	timed  bool
	owners []owner // the composition's layers, whose rejections are the call's
	// known holds the first rejections found to be by one of owners, with their layer: a
	// policy returns the same preallocated rejections again and again, which then need no
	// classifying. Filled once each, so that a rejection never allocates after the first.
	known [4]atomic.Pointer[rejection]
}

// rejection is an error found to be a rejection by one of a composition's layers.
type rejection struct {
	err   error
	layer policy.Layer
}

// owner is a layer of a composition and the id of its instance; any is set for a user's
// policy, whose rejections carry no instance id that the composition knows.
type owner struct {
	layer policy.Layer
	id    string
	any   bool
}

// newWhole returns the recorder of the whole calls of composition c, nil without one.
func newWhole(rec observe.Recorder, clk clock.Clock, c *composition) *whole {
	if rec == nil {
		return nil
	}
	w := &whole{rec: rec, clk: clk, timed: recording.Timed(rec)}
	for _, p := range c.parts {
		o := owner{layer: p.layer, any: true}
		if !p.user {
			if id, ok := contract.IDOf(p.layer, p.inst); ok {
				o.id, o.any = id, false
			}
		}
		w.owners = append(w.owners, o)
	}
	return w
}

// observeSync returns next recording each call's outcome, as a whole, with w; next
// itself when w is nil. A call that panics is recorded as failed, with no error, and
// the panic goes on.
func observeSync[A, T any](w *whole, next decorate.Func[A, T]) decorate.Func[A, T] {
	if w == nil {
		return next
	}
	return func(ctx context.Context, a A) (v T, err error) {
		start := w.begin()
		ended := false
		defer w.recordPanic(ctx, &ended, start)
		v, err = next(ctx, a)
		ended = true
		w.record(ctx, err, false, start)
		return v, err
	}
}

// observeAsync is observeSync for calls that return a future: the outcome is recorded
// when the future completes, at once when it already has (a rejection, a future
// already complete), without a callback.
func observeAsync[A, T any](w *whole, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	if w == nil {
		return next
	}
	return func(ctx context.Context, a A) *async.Future[T] {
		start := w.begin()
		ended := false
		defer w.recordPanic(ctx, &ended, start)
		f := orFailed(next(ctx, a))
		ended = true
		if _, done, err := f.Result(); done {
			w.record(ctx, err, false, start)
		} else {
			f.OnComplete(func(_ T, err error) { w.record(ctx, err, false, start) })
		}
		return f
	}
}

// begin returns the start of a whole call, as record takes it: the clock's reading when
// w times calls, else 0.
func (w *whole) begin() time.Duration {
	if w.timed {
		return w.clk.Now()
	}
	return 0
}

// recordPanic, deferred by a whole call that began at start, records it as failed, with
// no error, unless it ended: it panicked, and the panic goes on.
func (w *whole) recordPanic(ctx context.Context, ended *bool, start time.Duration) {
	if !*ended {
		w.record(ctx, nil, true, start)
	}
}

// record tells the recorder the outcome of a whole call, whose context is ctx (nil:
// context.Background()), that began at start and ended now with err, or panicked: a
// success, a rejection by one of the composition's layers, or a failure. Each outcome
// is built in place, in the call to Record.
func (w *whole) record(ctx context.Context, err error, panicked bool, start time.Duration) {
	if ctx == nil {
		ctx = context.Background()
	}
	var latency time.Duration
	if w.timed {
		latency = sat.Left(w.clk.Now(), start)
	}
	switch {
	case panicked:
		w.rec.Record(ctx, observe.Outcome{Result: observe.ResultFailed, Latency: latency})
	case err == nil:
		w.rec.Record(ctx, observe.Outcome{Result: observe.ResultSucceeded, Latency: latency})
	default:
		if l, ok := w.rejectedBy(err); ok {
			w.rec.Record(ctx, observe.Outcome{Result: observe.ResultRejected, RejectedBy: l, Latency: latency, Err: err})
			return
		}
		w.rec.Record(ctx, observe.Outcome{Result: observe.ResultFailed, Latency: latency, Err: err})
	}
}

// rejectedBy returns the layer that refused a call failed with err, when it is one of
// the composition's own: a rejection by a layer of another composition, e.g. of a
// function this one calls, is a failure of this one.
func (w *whole) rejectedBy(err error) (policy.Layer, bool) {
	for i := range w.known {
		k := w.known[i].Load()
		if k == nil {
			break
		}
		if k.err == err { // only pointers are kept: comparing never panics
			return k.layer, true
		}
	}
	l, ok := w.classify(err)
	if ok && reflect.TypeOf(err).Kind() == reflect.Pointer {
		r := &rejection{err: err, layer: l}
		for i := range w.known {
			if w.known[i].CompareAndSwap(nil, r) {
				break
			}
			if w.known[i].Load().err == err {
				break
			}
		}
	}
	return l, ok
}

// classify is rejectedBy without the memory of the last rejection.
func (w *whole) classify(err error) (policy.Layer, bool) {
	r, ok := errors.AsType[policy.Rejection](err)
	if !ok {
		return "", false
	}
	l := r.RejectedBy()
	var id string
	h, hasID := err.(interface{ InstanceID() string })
	if hasID {
		id = h.InstanceID()
	}
	for _, o := range w.owners {
		if o.layer == l && (o.any || !hasID || o.id == id) {
			return l, true
		}
	}
	return "", false
}
