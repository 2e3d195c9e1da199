package resilience

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
)

// callRecorder returns the recorder of the whole calls of the composition of id, asked of
// the registry's observer; nil without an observer.
func (r *Registry) callRecorder(id string) policy.Recorder {
	if r.observer == nil {
		return nil
	}
	return r.observer.Instrument(policy.LayerCall, id)
}

// observeSync returns next recording each call's outcome, as a whole, with rec; next
// itself when rec is nil.
func observeSync[A, T any](rec policy.Recorder, clk clock.Clock, next policy.Func[A, T]) policy.Func[A, T] {
	if rec == nil {
		return next
	}
	if !policy.Timed(rec) {
		return func(ctx context.Context, a A) (T, error) {
			v, err := next(ctx, a)
			recordWhole(ctx, rec, err, 0)
			return v, err
		}
	}
	return func(ctx context.Context, a A) (T, error) {
		start := clk.Now()
		v, err := next(ctx, a)
		recordWhole(ctx, rec, err, sat.Left(clk.Now(), start))
		return v, err
	}
}

// observeAsync is observeSync for calls that return a future: the outcome is recorded
// when the future completes.
func observeAsync[A, T any](rec policy.Recorder, clk clock.Clock, next policy.AsyncFunc[A, T]) policy.AsyncFunc[A, T] {
	if rec == nil {
		return next
	}
	timed := policy.Timed(rec)
	return func(ctx context.Context, a A) *async.Future[T] {
		var start time.Duration
		if timed {
			start = clk.Now()
		}
		f := orFailed(next(ctx, a))
		f.OnComplete(func(_ T, err error) {
			var latency time.Duration
			if timed {
				latency = sat.Left(clk.Now(), start)
			}
			recordWhole(ctx, rec, err, latency)
		})
		return f
	}
}

// recordWhole tells rec the outcome of a whole call, whose context is ctx, that ended
// with err after latency: a success, a rejection by the layer that refused it, or a
// failure. Each outcome is built in place, in the call to Record.
func recordWhole(ctx context.Context, rec policy.Recorder, err error, latency time.Duration) {
	if err == nil {
		rec.Record(ctx, policy.Outcome{Result: policy.ResultSucceeded, Latency: latency})
		return
	}
	if l, ok := policy.RejectedBy(err); ok {
		rec.Record(ctx, policy.Outcome{Result: policy.ResultRejected, RejectedBy: l, Latency: latency, Err: err})
		return
	}
	rec.Record(ctx, policy.Outcome{Result: policy.ResultFailed, Latency: latency, Err: err})
}
