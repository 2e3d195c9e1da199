package circuitbreaker

import (
	"time"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// reconfigure applies c to the running breaker: a registry's Reload calls it (through
// live) when the breaker's configuration keys change. c is validated as New validates it:
// an invalid c returns the same *policy.ConfigError (see Config.validate) and changes
// nothing. What changes, and from when:
//   - FailureRateThreshold, SlowCallRateThreshold and MinimumCalls: from the next outcome
//     recorded, which compares the rates with them (the window keeps its outcomes;
//     reconfigure itself does not open the breaker).
//   - SlowCallThreshold, IgnoreOn and RecordOn: for the calls admitted after the change;
//     a call in flight is classified by the configuration that admitted it.
//   - WaitInOpen and MaxWaitInHalfOpen: from the next transition to open or half-open;
//     a breaker already open or half-open keeps the deadline it was given.
//   - PermittedInHalfOpen: from the next call. Raised while half-open, more trials are let
//     through; lowered, no more are, and once the trials in flight are over the trials
//     recorded decide (at once, within reconfigure, when none is in flight and they
//     already reach the new number).
//   - SlidingWindowSize: the window is resized at once, keeping its most recent outcomes
//     that fit: the last min(held, size) calls of a count-based window, the last
//     min(old size, size) seconds of a time-based one. Growing it adds room, not history.
//   - Disabled: the breaker goes to its new initial state at once, as Reset does (closed
//     with an empty window, or disabled); calls in flight are not recorded. Reset returns
//     to that state from then on.
//
// The sliding window's type cannot change on a running breaker: the outcomes of a
// count-based window have no time, and those of a time-based one no order, so the window
// could only start again empty. A c whose SlidingWindowType differs from the configuration
// in force returns a *policy.ConfigError with code R4C-REG-012 (r4c.NotLive) and
// key circuitBreaker.slidingWindowType, and changes nothing; build a new breaker instead.
// RecordIf's predicate is not part of Config: reconfigure keeps it.
//
// The state, the transitions already scheduled (an open breaker's WaitInOpen, a half-open
// breaker's MaxWaitInHalfOpen) and the window's outcomes are kept, but for the changes
// above. When c differs from the configuration in force, a ConfigChanged event is
// published, whose Changed lists the attributes that changed, sorted, by their
// configuration names ("failureRateThreshold", "minimumCalls", "enabled", ...; "ignoreOn"
// and "recordOn" for the error lists, which are set in code only), before the transition
// event the change makes, if any; when it is equal (error lists compared by identity, as
// errors.Is compares them), nothing is published. The breaker keeps its own copy of c's
// error lists. It is safe for concurrent use, with calls and with other reconfigures,
// which apply one after the other. The event listener must not make a reload (nor change
// the breaker's state, see OnEvent).
func (b *Breaker) reconfigure(c Config) error {
	now := b.now()
	b.mu.Lock()
	old := b.cur.Load()
	changed, err := changes(old.cfg, c)
	if err != nil || len(changed) == 0 {
		b.mu.Unlock()
		return err
	}
	contract.Own(&c.IgnoreOn, &c.RecordOn)
	r := newRules(c, b.recordIf, &b.events)
	resized := c.SlidingWindowSize != old.cfg.SlidingWindowSize
	if resized {
		b.setCleanLocked(false) // before the window changes, as a transition does
		b.win.resize(c.SlidingWindowSize)
	}
	b.cur.Store(r)
	var tr transition
	switch st := b.state(); {
	case c.Disabled != old.cfg.Disabled:
		tr = b.transitionLocked(r.initial, now)
	case st == stClosed && resized:
		b.setCleanLocked(b.win.clean())
	case st == stHalfOpen && now < b.halfOpenUntil:
		// Past halfOpenUntil the breaker has given up on its trials already: the next call
		// finds that out, as it would have without the change.
		tr = b.decideLocked(r, now)
	}
	b.unlockAndPublishChange(now, changed, tr)
	return nil
}

// checkReconfigure reports the error reconfigure would return for c, without applying
// it: nil, the *policy.ConfigError of an invalid c, or one with code R4C-REG-012 when c
// changes the sliding window's type. Safe for concurrent use.
func (b *Breaker) checkReconfigure(c Config) error {
	return contract.ErrOf(changes(b.cur.Load().cfg, c))
}

// live is the descriptor's Composition.Live: the change of a running breaker to a
// configuration cfg (a Config, or the Config of a contract.Shared[Config]).
func live(inst contract.Instance, cfg any) (contract.LiveChange, bool) {
	b, ok := inst.(*Breaker)
	if !ok {
		return contract.LiveChange{}, false
	}
	return contract.LiveAs[Config](reconfigurer{b}, cfg)
}

// reconfigurer is a breaker as contract.LiveAs takes it.
type reconfigurer struct{ *Breaker }

func (r reconfigurer) CheckReconfigure(c Config) error { return r.checkReconfigure(c) }
func (r reconfigurer) Reconfigure(c Config) error      { return r.reconfigure(c) }

// changes validates c as a new configuration for a breaker running with old, and returns
// the attribute names of the settings that change, sorted.
func changes(old, c Config) ([]string, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	if c.SlidingWindowType != old.SlidingWindowType {
		return nil, r4c.Errorf(r4c.NotLive, "circuitBreaker.slidingWindowType", c.SlidingWindowType,
			"slidingWindowType cannot change on a running circuit breaker (it is %v): its window's outcomes "+
				"cannot be carried over; build a new breaker", old.SlidingWindowType)
	}
	var changed contract.Changes
	add := changed.Add
	add(c.FailureRateThreshold != old.FailureRateThreshold, "failureRateThreshold")
	add(c.SlidingWindowSize != old.SlidingWindowSize, "slidingWindowSize")
	add(c.MinimumCalls != old.MinimumCalls, "minimumCalls")
	add(c.WaitInOpen != old.WaitInOpen, "waitInOpen")
	add(c.PermittedInHalfOpen != old.PermittedInHalfOpen, "permittedInHalfOpen")
	add(c.MaxWaitInHalfOpen != old.MaxWaitInHalfOpen, "maxWaitInHalfOpen")
	add(c.SlowCallThreshold != old.SlowCallThreshold, "slowCallThreshold")
	add(c.SlowCallRateThreshold != old.SlowCallRateThreshold, "slowCallRateThreshold")
	add(!contract.Same(c.IgnoreOn, old.IgnoreOn), "ignoreOn")
	add(!contract.Same(c.RecordOn, old.RecordOn), "recordOn")
	add(c.Disabled != old.Disabled, "enabled")
	add(c.Shadow != old.Shadow, "shadow")
	return changed.Sorted(), nil
}

// unlockAndPublishChange releases mu and publishes the ConfigChanged event of a change
// made at clock time now, then the transition it made, if any. Like unlockAndPublish, it
// hands the events over in order: pubMu is taken before mu is released.
func (b *Breaker) unlockAndPublishChange(now int64, changed []string, tr transition) {
	if !b.events.Observed() {
		b.mu.Unlock()
		return
	}
	b.pubMu.Lock()
	b.mu.Unlock()
	defer b.pubMu.Unlock()
	b.events.Publish(policy.Event{Kind: policy.ConfigChanged, At: time.Duration(now), Changed: changed})
	if tr.ok {
		b.events.Publish(policy.Event{Kind: EventTransition,
			At: time.Duration(tr.at), Attrs: transitionAttrs(tr.from, tr.to)})
	}
}
