package circuitbreaker

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
)

// transition is a state change to publish once mu is released.
type transition struct {
	from, to State
	at       int64
	ok       bool
}

// transitionLocked moves the breaker to state to at clock time now, under mu: it starts a
// new generation (outcomes of calls admitted before are not recorded) and sets the new
// state up. It returns the event to publish, ok = false when the state does not change.
func (b *Breaker) transitionLocked(to State, now int64) transition {
	w := b.word.Load()
	from := State(w & stateMask)
	r := b.cur.Load()
	// Every transition clears the flag, before word changes: it holds only for the window
	// of the current Closed state, and records set it again once a new window is full.
	b.setCleanLocked(false)
	switch to {
	case Closed:
		b.win.reset(now)
		b.shown = showWindow
	case Open:
		// The snapshot keeps showing the counts that opened the breaker.
		until := sat.Add(time.Duration(now), time.Duration(r.waitInOpen))
		b.openUntil.Store(int64(until)) // before word: whoever sees Open sees its deadline
	case HalfOpen:
		b.trials, b.inFlight = counts{}, 0
		b.halfOpenUntil = int64(sat.Add(time.Duration(now), time.Duration(r.maxHalfOpen)))
		b.shown = showTrials
	case Disabled, ForcedOpen:
		b.shown = showNone
	}
	b.notPermitted.Store(0)
	b.word.Store((w>>stateBits+1)<<stateBits | uint64(to))
	return transition{from: from, to: to, at: now, ok: from != to}
}

// unlockAndPublish releases mu and publishes tr, then next (each only if it is a
// change), with ctx, the context of the call that made them (context.Background() for a
// change no call made). The next transitions cannot be published before these: pubMu is
// taken before mu is released.
func (b *Breaker) unlockAndPublish(ctx context.Context, tr, next transition) {
	if !tr.ok && !next.ok || !b.events.Observed() {
		b.mu.Unlock()
		return
	}
	b.pubMu.Lock()
	b.mu.Unlock()
	defer b.pubMu.Unlock()
	for _, t := range [...]transition{tr, next} {
		if t.ok {
			b.events.PublishCtx(ctx, policy.Event{Kind: EventTransition,
				At: time.Duration(t.at), Attrs: transitionAttrs(t.from, t.to)})
		}
	}
}

// setCleanLocked sets the clean flag, under mu, writing it only when it changes (it
// shares its cache line with word, which every call reads).
func (b *Breaker) setCleanLocked(c bool) {
	if b.clean.Load() != c {
		b.clean.Store(c)
	}
}

// decideLocked ends, under mu, a half-open state whose trials are over: once no trial is
// in flight and at least PermittedInHalfOpen have been recorded, their rates close the
// breaker or open it again, at clock time now. While PermittedInHalfOpen is unchanged,
// the trials recorded reach it only when none is in flight; after Reconfigure lowered it,
// the trials still in flight are waited for and counted too.
func (b *Breaker) decideLocked(r *rules, now int64) transition {
	if b.inFlight > 0 || b.trials.calls < r.permitted {
		return transition{}
	}
	to := Closed
	if r.exceeded(b.trials) {
		to = Open
	}
	return b.transitionLocked(to, now)
}

// ForceOpen moves the breaker to the forced-open state (ForcedOpen): every call is
// rejected with ErrOpen until Reset (or Disable). Calls in flight are not recorded.
// Publishes a transition event unless the breaker is already forced open.
func (b *Breaker) ForceOpen() { b.setState(ForcedOpen) }

// Disable moves the breaker to the disabled state (Disabled): every call passes and
// nothing is recorded, until Reset (or ForceOpen). Publishes a transition event unless the
// breaker is already disabled.
func (b *Breaker) Disable() { b.setState(Disabled) }

// Reset returns the breaker to the closed state with an empty window (to the disabled
// state if the configuration in force disables it: Enabled(false), or a Reconfigure with
// Disabled). Calls in flight are not recorded. Publishes a transition event if the state
// changes.
func (b *Breaker) Reset() {
	now := b.now()
	b.mu.Lock()
	b.unlockAndPublish(context.Background(), b.transitionLocked(b.cur.Load().initial, now), transition{})
}

func (b *Breaker) setState(to State) {
	now := b.now()
	b.mu.Lock()
	if b.State() == to {
		b.mu.Unlock()
		return
	}
	b.unlockAndPublish(context.Background(), b.transitionLocked(to, now), transition{})
}
