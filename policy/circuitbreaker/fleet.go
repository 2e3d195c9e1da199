package circuitbreaker

import (
	"context"
	"log/slog"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker/internal/fleet"
	"github.com/resilience4go/resilience4go/policy/internal/decimal"
)

// Fleet shares the state of breakers among the processes of a service (its instances):
// the breakers given the same Fleet (WithFleet) and the same Name, in every process, move
// together. Package policy/circuitbreaker/redis implements it on Redis (its New returns
// one); the breaker knows only the contract, which is this module's own.
type Fleet = fleet.Fleet

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
func (b *Breaker) follow(s fleet.State, read bool) { b.followCtx(context.Background(), s, read) }

func (b *Breaker) followCtx(ctx context.Context, s fleet.State, read bool) {
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
			b.fleet.Propose(fleet.State{State: t.from.String(), Epoch: t.epoch}, t.to.String())
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
	s, err := b.fleet.Record(ctx, epoch, fleet.Outcome{Failed: o&failedBit != 0, Slow: o&slowBit != 0,
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
