package circuitbreaker

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// permit is a call's admission: the state word that admitted it, its start time, and the
// rules in force then, which classify its outcome (nil for a call admitted while
// Disabled). start is read only when it is needed: for a call admitted while half-open,
// and for one admitted while closed under timed rules; otherwise it is 0.
type permit struct {
	word  uint64
	start int64
	r     *rules
}

// closed reports whether the call was admitted while closed.
func (p *permit) closed() bool { return state(p.word&stateMask) == stClosed }

// acquire admits a call whose context is ctx or returns the rejection (which the caller
// returns as is). Closed: two atomic loads and no lock; the clock is read (the call's
// start) only under timed rules. Open: one clock read, no lock until WaitInOpen has
// passed. HalfOpen: the mutex, to count trial slots and to give up on trials that took
// longer than MaxWaitInHalfOpen. The events and the outcome of a rejection are published
// and recorded with ctx.
func (b *Breaker) acquire(ctx context.Context) (permit, *openError) {
	w := b.word.Load()
	switch state(w & stateMask) {
	case stClosed:
		r := b.cur.Load()
		if !r.timed {
			return permit{word: w, r: r}, nil
		}
		return permit{word: w, start: b.now(), r: r}, nil
	case stOpen:
		now := b.now()
		if until := b.openUntil.Load(); now < until {
			return b.refuse(ctx, b.rej.open, now, until)
		}
		return b.acquireLocked(ctx, now)
	case stDisabled:
		return permit{word: noRecord}, nil
	case stForcedOpen:
		var now int64
		if b.events.Observed() {
			now = b.now()
		}
		return b.refuse(ctx, b.rej.forcedOpen, now, now)
	default: // HalfOpen
		return b.acquireLocked(ctx, b.now())
	}
}

// closedPermit is acquire's lock-free path, inlined where calls are decorated: the permit
// of a call admitted while closed under rules that are not timed, and ok = true;
// otherwise ok = false, and acquire decides.
func (b *Breaker) closedPermit() (p permit, ok bool) {
	w := b.word.Load()
	r := b.cur.Load()
	return permit{word: w, r: r}, state(w&stateMask) == stClosed && !r.timed
}

// acquireLocked decides under the mutex, at clock time now: it gives up on half-open
// trials that took longer than MaxWaitInHalfOpen (the breaker is open again from then),
// moves an open breaker whose wait has passed to HalfOpen, and hands out the half-open
// trial slots. The transitions, and the rejection, are published with ctx, the context of
// the call that asks.
func (b *Breaker) acquireLocked(ctx context.Context, now int64) (permit, *openError) {
	b.mu.Lock()
	w := b.word.Load()
	st := state(w & stateMask)
	r := b.cur.Load()
	switch st {
	case stClosed:
		b.mu.Unlock()
		return permit{word: w, start: now, r: r}, nil
	case stDisabled:
		b.mu.Unlock()
		return permit{word: noRecord}, nil
	case stForcedOpen:
		b.mu.Unlock()
		return b.refuse(ctx, b.rej.forcedOpen, now, now)
	}
	// At most two transitions: half-open→open when the trials took too long, then
	// open→half-open when the open wait that followed has passed too.
	var reopened, halfOpened transition
	if st == stHalfOpen && now >= b.halfOpenUntil {
		reopened = b.transitionLocked(stOpen, b.halfOpenUntil)
		st = stOpen
	}
	if st == stOpen {
		if until := b.openUntil.Load(); now < until {
			b.unlockAndPublish(ctx, reopened, transition{})
			return b.refuse(ctx, b.rej.open, now, until)
		}
		halfOpened = b.transitionLocked(stHalfOpen, now)
		w = b.word.Load()
	}
	// HalfOpen: a trial slot is free while admitted and completed trials are fewer than
	// PermittedInHalfOpen.
	if b.inFlight+b.trials.calls < r.permitted {
		b.inFlight++
		if b.fleet != nil && !b.fleetDown {
			epoch := b.fleetEpoch
			b.unlockAndPublish(ctx, reopened, halfOpened)
			return b.fleetTrial(ctx, w, epoch, now, r)
		}
		b.unlockAndPublish(ctx, reopened, halfOpened)
		return permit{word: w, start: now, r: r}, nil
	}
	b.unlockAndPublish(ctx, reopened, halfOpened)
	return b.refuse(ctx, b.rej.halfOpen, now, now)
}

// refuse is the refusal err, at clock time now, of the call whose context is ctx (until
// as for rejected): rejected, with the zero permit and err; in shadow mode, the call is
// let through instead, with a permit whose outcome only the recorder is told, started
// at now, and the refusal is counted and published as shadowed. A breaker forced open
// rejects in shadow mode too: that state is an operator's decision, not the breaker's.
func (b *Breaker) refuse(ctx context.Context, err *openError, now, until int64) (permit, *openError) {
	if r := b.cur.Load(); r.cfg.Shadow && err != b.rej.forcedOpen {
		return b.letThrough(ctx, r, err, now, until), nil
	}
	b.rejected(ctx, err, now, until)
	return permit{}, err
}

// letThrough is refuse in shadow mode, under the rules r: the refusal counted and
// published as shadowed, and the permit of the call let through.
func (b *Breaker) letThrough(ctx context.Context, r *rules, err *openError, now, until int64) permit {
	b.notPermitted.Add(1)
	b.shadowN.Add(1)
	if b.events.Observed() {
		b.events.PublishCtx(ctx, policy.Event{Kind: EventRejected, At: time.Duration(now),
			RetryAfter: sat.Left(time.Duration(until), time.Duration(now)), Err: err,
			Attrs: policy.EventAttrs{contract.ShadowEvent}})
	}
	return permit{word: shadowRecord, start: now, r: r}
}

// rejected counts the rejection err of the call whose context is ctx, records it
// (ResultRejected) and publishes it, with ctx, at clock time now; until is when an open
// breaker lets a trial through (now when unknown), from which the event's RetryAfter is
// worked out, only when someone listens.
func (b *Breaker) rejected(ctx context.Context, err *openError, now, until int64) {
	b.notPermitted.Add(1)
	if b.events.Rec != nil {
		b.events.Rec.Record(ctx, observe.Outcome{Result: observe.ResultRejected, Err: err})
	}
	if b.events.Observed() {
		b.events.PublishCtx(ctx, policy.Event{Kind: EventRejected,
			At: time.Duration(now), RetryAfter: sat.Left(time.Duration(until), time.Duration(now)), Err: err})
	}
}
