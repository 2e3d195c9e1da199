package circuitbreaker

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
)

// transition is a state change to publish once mu is released.
type transition struct {
	from, to state
	at       int64
	ok       bool
	// epoch is the fleet's epoch of the state left; followed says that the transition
	// came from the fleet (see follow).
	epoch    uint64
	followed bool
}

// transitionLocked moves the breaker to state to at clock time now, under mu: it starts a
// new generation (outcomes of calls admitted before are not recorded) and sets the new
// state up. It returns the event to publish, ok = false when the state does not change.
func (b *Breaker) transitionLocked(to state, now int64) transition {
	w := b.word.Load()
	from := state(w & stateMask)
	r := b.cur.Load()
	// Every transition clears the flag, before word changes: it holds only for the window
	// of the current Closed state, and records set it again once a new window is full.
	b.setCleanLocked(false)
	switch to {
	case stClosed:
		b.win.reset(now)
		b.shown = showWindow
	case stOpen:
		// The snapshot keeps showing the counts that opened the breaker.
		until := sat.Add(time.Duration(now), time.Duration(r.waitInOpen))
		b.openUntil.Store(int64(until)) // before word: whoever sees Open sees its deadline
	case stHalfOpen:
		b.trials, b.inFlight = counts{}, 0
		b.halfOpenUntil = int64(sat.Add(time.Duration(now), time.Duration(r.maxHalfOpen)))
		b.shown = showTrials
	case stDisabled, stForcedOpen:
		b.shown = showNone
	}
	b.notPermitted.Store(0)
	b.fleetDown = false
	b.word.Store((w>>stateBits+1)<<stateBits | uint64(to))
	return transition{from: from, to: to, at: now, ok: from != to, epoch: b.fleetEpoch}
}

// unlockAndPublish releases mu and publishes tr, then next (each only if it is a
// change), with ctx, the context of the call that made them (context.Background() for a
// change no call made). The next transitions cannot be published before these: pubMu is
// taken before mu is released.
func (b *Breaker) unlockAndPublish(ctx context.Context, tr, next transition) {
	if !tr.ok && !next.ok {
		b.mu.Unlock()
		return
	}
	if !b.events.Observed() {
		b.mu.Unlock()
	} else {
		b.pubMu.Lock()
		b.mu.Unlock()
		for _, t := range [...]transition{tr, next} {
			if t.ok {
				attrs := transitionAttrs(t.from, t.to)
				if t.followed {
					attrs[2] = fleetAttr
				}
				b.events.PublishCtx(ctx, policy.Event{Kind: EventTransition, At: time.Duration(t.at), Attrs: attrs})
			}
		}
		b.pubMu.Unlock()
	}
	if b.fleet != nil {
		b.propose(tr, next)
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
// the trials recorded reach it only when none is in flight; after a reload lowered it,
// the trials still in flight are waited for and counted too.
func (b *Breaker) decideLocked(r *rules, now int64) transition {
	if b.fleet != nil && !b.fleetDown {
		return transition{} // the fleet decides from the trials of every member
	}
	if b.inFlight > 0 || b.trials.calls < r.permitted {
		return transition{}
	}
	to := stClosed
	if r.exceeded(b.trials) {
		to = stOpen
	}
	return b.transitionLocked(to, now)
}

// TransitionTo moves the breaker to the state named to, by hand, as a call or a timer
// never would: ForcedOpen rejects every call with ErrOpen, and Disabled lets every call
// pass recording nothing, until the next TransitionTo or Reset; Closed starts an empty
// window, Open a wait of WaitInOpen and HalfOpen a new set of trial calls, from which the
// breaker goes on by itself. Calls in flight are not recorded. It publishes a transition
// event, with context.Background(), unless the breaker is already in that state, in which
// case it does nothing. Another name returns a *policy.ConfigError with code R4C-ATR-007
// and changes nothing. Safe for concurrent use.
func (b *Breaker) TransitionTo(to string) error {
	st, ok := stateNamed(to)
	if !ok {
		return r4c.Errorf(r4c.OutOfRange, "state", to,
			"not a circuit breaker state: use Closed, Open, HalfOpen, Disabled or ForcedOpen")
	}
	b.setState(st)
	return nil
}

// Reset returns the breaker to the closed state with an empty window (to the disabled
// state if the configuration in force disables it: Enabled(false), or a reload that sets
// circuitBreaker.enabled to false). Calls in flight are not recorded. Publishes a
// transition event, with context.Background(), if the state changes. Safe for concurrent
// use.
func (b *Breaker) Reset() {
	now := b.now()
	b.mu.Lock()
	b.unlockAndPublish(context.Background(), b.transitionLocked(b.cur.Load().initial, now), transition{})
}

func (b *Breaker) setState(to state) {
	now := b.now()
	b.mu.Lock()
	if b.state() == to {
		b.mu.Unlock()
		return
	}
	b.unlockAndPublish(context.Background(), b.transitionLocked(to, now), transition{})
}
