package circuitbreaker

import (
	"context"
	"log/slog"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy/internal/decimal"
)

// Fleet shares the state of breakers among the processes of a service (its instances):
// the breakers given the same Fleet (WithFleet) and the same Name, in every process, move
// together. Package policy/circuitbreaker/redis implements it on Redis; the breaker knows
// only this contract.
//
// Join is called once by New, with the breaker's instance id (its Name), and follow, how
// the fleet moves the breaker: follow(s, false) for a transition another instance made
// (applied when its Epoch is above the last one the breaker applied), follow(s, true)
// for the fleet's state read whole (when joining, after a reconnect, or as the answer to
// a proposal that lost; applied also at an equal Epoch: the fleet wins). follow is safe
// for concurrent use and returns quickly; called while Join runs, it waits for Join.
// A Join that fails makes New fail with its error.
type Fleet interface {
	Join(name string, follow func(s FleetState, read bool)) (FleetMember, error)
}

// FleetState is a breaker's state as a fleet knows it: State is Closed, Open or HalfOpen
// and Epoch counts the fleet's transitions of that breaker name (0: none yet, closed).
type FleetState struct {
	State string
	Epoch uint64
}

// FleetMember is one breaker's membership of a Fleet. Its methods are safe for concurrent
// use.
//
//   - Propose hands the fleet a transition the breaker made by itself (closed to open on
//     its window's rates, half-open to open after MaxWaitInHalfOpen, Reset and
//     TransitionTo to Closed or Open), from the fleet state from: the fleet applies it
//     if it is still in from (a compare-and-set on the Epoch) and tells every member;
//     otherwise it answers with follow(current, true). It must not block: the breaker
//     calls it on the path of the call that made the transition.
//   - Trial asks for a half-open trial ticket, the breaker knowing the fleet's Epoch
//     epoch: if the fleet is open at that epoch, it goes half-open (the first member past
//     its WaitInOpen moves the fleet) and the ticket is the first; if it is half-open, a
//     ticket is granted while fewer than permitted were taken in that half-open. It
//     returns the fleet's state after the ticket, and an error (then nothing was granted
//     and the breaker goes on alone for that half-open) when the fleet cannot answer in
//     a short time.
//   - Record counts the outcome o of a trial that held a ticket of the half-open at
//     epoch; the outcome that completes o.Permitted trials decides for the fleet, closed
//     or open again, and the fleet's new state is returned (else its current one).
type FleetMember interface {
	Propose(from FleetState, to string)
	Trial(ctx context.Context, epoch uint64, permitted int) (s FleetState, granted bool, err error)
	Record(ctx context.Context, epoch uint64, o TrialOutcome) (FleetState, error)
}

// TrialOutcome is the outcome of one half-open trial, as FleetMember.Record counts it,
// with how the trials decide: once Permitted trials (ignored ones not counted: an
// ignored trial gives its ticket back) are recorded, the fleet opens again when at least
// FailedToOpen of them failed or at least SlowToOpen were slow, and closes otherwise
// (the breaker's thresholds, worked out for Permitted calls).
type TrialOutcome struct {
	Failed, Slow, Ignored               bool
	Permitted, FailedToOpen, SlowToOpen int
}

// WithFleet shares the breaker's state with every breaker of the same Name on f, in this
// process and in others: a transition among closed, open and half-open that one makes is
// followed by the others, and the half-open trials are counted fleet-wide (at most
// PermittedInHalfOpen in all). The calls themselves do not wait on the fleet while the
// breaker is closed or open: a transition is handed to the fleet as it happens, and the
// others follow when told; only a half-open trial asks the fleet for its ticket, and
// records its outcome, on the call's path. When the fleet cannot answer, the breaker goes
// on as one without a fleet, and takes the fleet's state again when it answers (the
// fleet wins). Transitions that came from the fleet carry the attribute "fleet" (true).
// A breaker without a Name (nor a registry's function id) fails with R4C-REG-010; a Join
// that fails, with its error. Default none: the breaker is alone in its process.
func WithFleet(f Fleet) Option { return func(s *settings) { s.fleet = f } }

// attrFleet is the key of the attribute of a transition that came from the fleet.
const attrFleet = "fleet"

// fleetAttr is that attribute.
var fleetAttr = slog.Bool(attrFleet, true)

// join makes b a member of the fleet of s, if any, under b's id.
func (b *Breaker) join(s *settings) error {
	if s.fleet == nil {
		return nil
	}
	if b.events.ID == "" {
		return r4c.Errorf(r4c.BadSpec, "circuitBreaker", "",
			"a breaker shared through a fleet needs a Name, which its fleet shares it by")
	}
	// Under mu, so that a follow that comes at once waits for the membership.
	b.mu.Lock()
	defer b.mu.Unlock()
	m, err := s.fleet.Join(b.events.ID, b.follow)
	if err != nil {
		return err
	}
	b.fleet = m
	return nil
}

// follow moves b to the fleet's state s (see Fleet): a newer Epoch, or with read the same
// one too. Disabled and forced-open breakers, set by hand, stay as they are.
func (b *Breaker) follow(s FleetState, read bool) { b.followCtx(context.Background(), s, read) }

func (b *Breaker) followCtx(ctx context.Context, s FleetState, read bool) {
	to, ok := stateNamed(s.State)
	if !ok || to != stClosed && to != stOpen && to != stHalfOpen {
		return
	}
	now := b.now()
	b.mu.Lock()
	if s.Epoch < b.fleetEpoch || s.Epoch == b.fleetEpoch && !read {
		b.mu.Unlock()
		return
	}
	b.fleetEpoch = s.Epoch
	if st := b.state(); st == to || st == stDisabled || st == stForcedOpen {
		b.mu.Unlock()
		return
	}
	tr := b.transitionLocked(to, now)
	tr.followed = true
	b.unlockAndPublish(ctx, tr, transition{})
}

// propose hands the fleet the transitions b made by itself, after mu is released: those
// to closed or open. The move to half-open is made by the first trial's ticket.
func (b *Breaker) propose(trs ...transition) {
	for _, t := range trs {
		if t.ok && !t.followed && (t.to == stClosed || t.to == stOpen) {
			b.fleet.Propose(FleetState{State: t.from.String(), Epoch: t.epoch}, t.to.String())
		}
	}
}

// fleetTrial asks the fleet for the ticket of a half-open trial that holds a local slot
// of the state word w, with the fleet's epoch, at clock time now under the rules r.
// Refused, the slot is given back and the call rejected; unanswered, the trial goes on
// and this half-open decides locally.
func (b *Breaker) fleetTrial(ctx context.Context, w, epoch uint64, now int64, r *rules) (permit, *openError) {
	s, granted, err := b.fleet.Trial(ctx, epoch, r.permitted)
	if err != nil {
		b.mu.Lock()
		if b.word.Load() == w {
			b.fleetDown = true
		}
		b.mu.Unlock()
		return permit{word: w, start: now, r: r}, nil
	}
	b.followCtx(ctx, s, false)
	if granted {
		return permit{word: w, start: now, r: r}, nil
	}
	b.mu.Lock()
	if b.word.Load() == w {
		b.inFlight--
	}
	b.mu.Unlock()
	return b.refuse(ctx, b.rej.halfOpen, now, now)
}

// fleetRecord records, on the fleet, outcome o (or ignored) of a trial admitted with the
// state word w in the fleet's half-open at epoch, under the rules r; the fleet's answer
// (its decision, once the trials are complete) is followed. Unanswered, this half-open
// decides locally from then on.
func (b *Breaker) fleetRecord(ctx context.Context, w, epoch uint64, o outcome, ignored bool, r *rules) {
	s, err := b.fleet.Record(ctx, epoch, TrialOutcome{Failed: o&failedBit != 0, Slow: o&slowBit != 0,
		Ignored: ignored, Permitted: r.permitted,
		FailedToOpen: toOpen(r.failureRate, r.permitted), SlowToOpen: toOpen(r.slowRate, r.permitted)})
	if err == nil {
		b.followCtx(ctx, s, false)
		return
	}
	now := b.now()
	b.mu.Lock()
	if b.word.Load() != w {
		b.mu.Unlock()
		return
	}
	b.fleetDown = true
	b.unlockAndPublish(ctx, b.decideLocked(r, now), transition{})
}

// toOpen returns the fewest of n calls whose rate reaches ratio: the count at or above
// which n trials open the breaker again.
func toOpen(ratio decimal.Decimal, n int) int {
	lo, hi := 0, n // ratio ≤ 1: n of n reach it
	for lo < hi {
		mid := (lo + hi) / 2
		if ratio.Less(uint64(mid), uint64(n)) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}
