package circuitbreaker

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/internal/sysclock"
	"github.com/resilience4go/resilience4go/policy/internal/decimal"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// classify returns the outcome of a call that ended with (v, err) (without its slow
// bit), or ignored = true for an error that counts as nothing, by the error lists of r.
// pred is RecordIf's predicate for T, or nil.
func classify[T any](r *rules, pred func(T, error) bool, v T, err error) (o outcome, ignored bool) {
	if err == nil {
		if pred != nil && pred(v, nil) {
			return failedBit, false
		}
		return 0, false
	}
	if r.cls.Excluded(err) {
		return 0, true
	}
	if contract.Counts(&r.cls, pred, v, err) {
		return failedBit, false
	}
	return 0, false
}

// onResult records the outcome of a call admitted with p, whose context is ctx, that ended
// with (v, err). A predicate that panics records the call as a failure, so that a
// half-open trial is not left taken, and the panic goes on.
func onResult[T any](ctx context.Context, b *Breaker, pred func(T, error) bool, p permit, v T, err error) {
	if p.word == noRecord {
		return
	}
	if pred != nil {
		classified := false
		defer func() {
			if !classified {
				b.record(ctx, p, failedBit, false, err)
			}
		}()
		o, ignored := classify(p.r, pred, v, err)
		classified = true
		b.record(ctx, p, o, ignored, err)
		return
	}
	o, ignored := classify(p.r, pred, v, err)
	b.record(ctx, p, o, ignored, err)
}

// record records outcome o (or, ignored, nothing but the release of a trial slot) of the
// call admitted with p, if the breaker is still in the state that admitted it, and makes
// the transition the new rates call for. The call's context is ctx and its error err: the
// recorder, if any, is told the outcome first (whatever state the breaker is in now), and
// the transition is published with ctx.
//
// The clock is read for the call's end only when something needs it: timed rules (the
// slow bit, the recorder's latency), a half-open trial (its deadline), a time-based
// window (the bucket). A closed count-based window needs the time only for a transition
// to open: with the system clock it is read then, under the mutex; with another clock
// (which may take locks of its own) before the mutex, for any outcome that is not
// recorded by the clean flag alone.
func (b *Breaker) record(ctx context.Context, p permit, o outcome, ignored bool, err error) {
	if p.word >= shadowRecord {
		if p.word == shadowRecord && b.events.Rec != nil { // let through in shadow mode
			b.observe(ctx, p, b.now(), o, ignored, err)
		}
		return
	}
	closed := p.closed()
	if closed && !p.r.timed {
		if ignored {
			if b.events.Rec != nil {
				b.observe(ctx, p, 0, o, true, err)
			}
			return
		}
		if b.events.Rec != nil {
			b.observe(ctx, p, 0, o, false, err)
		}
		if o == 0 && b.clean.Load() {
			return // see below
		}
		var now int64
		timed := b.timeBased || !b.system
		if timed {
			now = b.now()
		}
		b.recordLocked(ctx, p, now, timed, o, ignored)
		return
	}
	if ignored && closed {
		// Nothing to count and no trial slot to give back: the clock is read only for the
		// recorder's latency and slowness.
		if b.events.Rec != nil {
			b.observe(ctx, p, b.now(), o, true, err)
		}
		return
	}
	now := b.now()
	if p.r.slowThreshold > 0 && sat.Sub(time.Duration(now), time.Duration(p.start)) > time.Duration(p.r.slowThreshold) {
		o |= slowBit
	}
	if b.events.Rec != nil {
		b.observe(ctx, p, now, o, ignored, err)
	}
	if o == 0 && closed && b.clean.Load() {
		// The count-based window holds only fast successes: this one would replace the
		// oldest of them, so the window (a ring of identical outcomes, whichever slot is
		// the oldest) and its rates (0%, which open nothing) stay as they are. If the state
		// that admitted the call is over, it is not recorded either: nothing to do. The
		// flag is written under mu after the window changes, so a record that is changing
		// the window while this one reads true is ordered after this one.
		return
	}
	b.recordLocked(ctx, p, now, true, o, ignored)
}

// recordLocked is record's part under the mutex: it counts outcome o of the call admitted
// with p, ended at clock time now, and makes the transition it calls for. timed is false
// when now was not read (a closed count-based window with the system clock): it is read
// then only for a transition.
func (b *Breaker) recordLocked(ctx context.Context, p permit, now int64, timed bool, o outcome, ignored bool) {
	b.mu.Lock()
	if b.word.Load() != p.word {
		b.mu.Unlock() // the state that admitted the call is over
		return
	}
	r := b.cur.Load() // the thresholds in force now
	var tr transition
	if p.closed() {
		b.win.record(now, o) // a count-based window does not read now
		if b.win.total.calls >= r.minCalls && r.exceeded(b.win.total) {
			if !timed {
				now = int64(sysclock.Now()) // the system clock, which takes no lock
			}
			tr = b.transitionLocked(stOpen, now)
		} else {
			b.setCleanLocked(b.win.clean())
		}
	} else if now >= b.halfOpenUntil { // HalfOpen, for longer than MaxWaitInHalfOpen
		// The breaker gave up on its trials at halfOpenUntil: it is open from then on, and
		// this outcome, which came too late, is not recorded.
		tr = b.transitionLocked(stOpen, b.halfOpenUntil)
	} else { // HalfOpen
		b.inFlight--
		if !ignored {
			b.trials.add(o)
		}
		if b.fleet != nil && !b.fleetDown {
			epoch := b.fleetEpoch
			b.mu.Unlock()
			b.fleetRecord(ctx, p.word, epoch, o, ignored, r)
			return
		}
		tr = b.decideLocked(r, now)
	}
	b.unlockAndPublish(ctx, tr, transition{})
}

// observe tells the recorder (which must be set) the outcome of the call admitted with p,
// whose context is ctx, that ended at clock time now with err: ResultIgnored when
// ignored, else ResultFailed or ResultSucceeded by o's failed bit. Its latency, from its
// admission, is given when the recorder wants latencies (0 otherwise); it is slow when a
// SlowCallThreshold was in force when it was admitted and the latency is above it. now
// and p.start are read only under timed rules or for a half-open trial; otherwise the
// call is neither measured nor slow.
func (b *Breaker) observe(ctx context.Context, p permit, now int64, o outcome, ignored bool, err error) {
	out := observe.Outcome{Result: observe.ResultSucceeded, Err: err}
	if p.r.timed || !p.closed() {
		lat := sat.Left(time.Duration(now), time.Duration(p.start))
		out.Slow = p.r.slowThreshold > 0 && lat > time.Duration(p.r.slowThreshold)
		if b.events.Timed {
			out.Latency = lat
		}
	}
	switch {
	case ignored:
		out.Result = observe.ResultIgnored
	case o&failedBit != 0:
		out.Result = observe.ResultFailed
	}
	b.events.Rec.Record(ctx, out)
}

// exceeded reports whether c's failure rate or slow-call rate is at or above its
// threshold, exactly: failed × 100 / calls ≥ threshold, the threshold being the decimal
// written, is failed ≥ threshold / 100 × calls in whole numbers. c holds at least one
// call.
func (r *rules) exceeded(c counts) bool {
	calls := uint64(c.calls)
	return !r.failureRate.Less(uint64(c.failed), calls) || !r.slowRate.Less(uint64(c.slow), calls)
}

// ratioOf returns the ratio of a percentage of a valid Config.
func ratioOf(percent float64) decimal.Decimal {
	d, _ := decimal.Of(percent)
	return d.Shift(-2)
}
