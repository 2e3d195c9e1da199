// Package fleet is the contract between a circuit breaker and the fleet that shares its
// state among processes (circuitbreaker.WithFleet, implemented by package
// policy/circuitbreaker/redis).
package fleet

import "context"

// Fleet shares the state of breakers among the processes of a service (its instances):
// the breakers given the same Fleet (circuitbreaker.WithFleet) and the same Name, in every
// process, move
// together. Package policy/circuitbreaker/redis implements it on Redis; the breaker knows
// only this contract.
//
// Join is called once by circuitbreaker.New, with the breaker's instance id (its Name), and follow, how
// the fleet moves the breaker: follow(s, false) for a transition another instance made
// (applied when its Epoch is above the last one the breaker applied), follow(s, true)
// for the fleet's state read whole (when joining, after a reconnect, or as the answer to
// a proposal that lost; applied also at an equal Epoch: the fleet wins). follow is safe
// for concurrent use and returns quickly; called while Join runs, it waits for Join.
// A Join that fails makes New fail with its error.
type Fleet interface {
	Join(name string, follow func(s State, read bool)) (Member, error)
}

// State is a breaker's state as a fleet knows it: State is "closed", "open" or "half-open"
// and Epoch counts the fleet's transitions of that breaker name (0: none yet, closed).
type State struct {
	State string
	Epoch uint64
}

// Member is one breaker's membership of a Fleet. Its methods are safe for concurrent
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
type Member interface {
	Propose(from State, to string)
	Trial(ctx context.Context, epoch uint64, permitted int) (s State, granted bool, err error)
	Record(ctx context.Context, epoch uint64, o Outcome) (State, error)
}

// Outcome is the outcome of one half-open trial, as Member.Record counts it,
// with how the trials decide: once Permitted trials (ignored ones not counted: an
// ignored trial gives its ticket back) are recorded, the fleet opens again when at least
// FailedToOpen of them failed or at least SlowToOpen were slow, and closes otherwise
// (the breaker's thresholds, worked out for Permitted calls).
type Outcome struct {
	Failed, Slow, Ignored               bool
	Permitted, FailedToOpen, SlowToOpen int
}
