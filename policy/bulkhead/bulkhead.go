// Package bulkhead is resilience4go's bulkhead (layer bulkhead.Layer, the innermost
// of the built-in layers in the default order): at most MaxConcurrent calls are in flight
// at once; the others wait for a slot, up to MaxWait, or are rejected with ErrFull.
//
// Use it to keep a dependency, or the callers of one, from taking more than their share:
// a connection pool's size, a backend that takes only so many requests at once, a slow
// dependency that must not hold every goroutine of the service. For a limit that follows
// the dependency's latency instead of a fixed size, see package adaptivelimit. Build a
// bulkhead with New and guard a function with NewPolicy, or let a registry build it,
// composed with other policies, with resilience.Wrap:
//
//	b, err := bulkhead.New(bulkhead.MaxConcurrent(10), bulkhead.MaxWait(50*time.Millisecond))
//	get := bulkhead.NewPolicy[Stock](b).Decorate(fetchStock)
//
//	get, err := resilience.Wrap(reg, "Inventory.Get", fetchStock, resilience.Bulkhead())
//
// Where the detail is:
//   - Bulkhead: how slots are taken and handed to the calls that wait for them;
//   - NewPolicy: how a call goes, synchronous or returning a future, and what a
//     recorder is told;
//   - ErrFull, the rejections; EventRejected and EventWaited, the events;
//   - New (the defaults), Config (every setting, and what a reload changes on a running
//     bulkhead) and the options.
package bulkhead

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/internal/slots"
)

// Bulkhead limits how many calls are in flight at once. Build it with New and guard
// calls with NewPolicy (a registry builds its own for resilience.Bulkhead). It is safe
// for concurrent use. Its MaxConcurrent and MaxWait can change while it runs (a
// registry's reload, see Config); whether it is enabled is fixed when it is built.
//
// A call holds a slot from its start until it returns (synchronous calls, also when they
// panic) or until its future completes (asynchronous calls). The calls in flight are one
// atomic counter, beside the limit: a call that finds a slot free and nobody waiting
// takes it with one compare-and-swap, and a call rejected at once (MaxWait 0, the
// default) only reads MaxWait besides; neither allocates.
//
// A call's priority (policy.PriorityFrom its context; critical without one) decides how
// many slots it may take: every slot for a critical or critical_plus call, fewer for the
// others, as Config.PriorityReserve says. Waiting calls queue by priority, and in arrival
// order (FIFO) within one. A released slot goes to the oldest waiter of the highest
// priority, if its priority may take it; while anyone of its priority or above waits, a
// newcomer queues behind them instead of taking a slot that is released in between (no
// barging). A synchronous waiter blocks on the caller's goroutine
// until it is handed a slot, MaxWait passes on the bulkhead's clock (a manual clock moves
// only when the test advances it), or its context ends. An asynchronous waiter is a queued
// callback, not a goroutine: it starts the call on the goroutine that hands it the slot,
// a clock timer rejects it after MaxWait, and cancelling its future (or its context
// ending) removes it from the queue at once; the call then never starts.
//
// A call whose context is nil or already done when it arrives takes no slot, never runs
// the function and publishes nothing, whatever slots are free: it is rejected at once
// with the bulkhead's rejection built with the context's error, so that errors.Is finds
// both ErrFull and that error (policy.ErrNilContext for a nil context).
type Bulkhead struct {
	// Read-only after New.
	events contract.Events

	// cur is the configuration in force, replaced whole by reconfigure (under mu); the
	// calls never read it.
	cur atomic.Pointer[Config]
	mu  sync.Mutex // serializes reconfigure

	s slots.Slots // the slots, MaxConcurrent of them, the queue and the rejections
}

// New builds a bulkhead from opts, over the defaults: MaxConcurrent 25, MaxWait 0
// (waiting is opt-in, as for the rate limiter), Enabled true. An invalid configuration
// returns a *policy.ConfigError:
// R4C-ATR-007 (MaxConcurrent < 1), R4C-ATR-004 (MaxWait < 0). The instance id is the
// Name, else "" (no id: its errors and events name no instance).
func New(opts ...Option) (*Bulkhead, error) { return contract.New(defaults, build, opts) }

// build builds a bulkhead from s.
func build(s settings) (*Bulkhead, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	id := s.ID("")
	b := &Bulkhead{events: s.EventsOf(Layer, id)}
	b.s.Init(&b.events, slots.Config{
		Enabled: !s.Disabled, Clock: s.ClockOrSystem(),
		Layer: Layer, Sentinel: ErrFull, Message: fullMessage(id),
		Rejected: EventRejected, Waited: EventWaited,
		Limit: s.MaxConcurrent, MaxWait: s.MaxWait, Reserve: s.PriorityReserve, Shadow: s.Shadow,
	})
	b.cur.Store(&s.Config)
	return b, nil
}

// reconfigure applies c to the running bulkhead, for a registry's reload. c is validated
// as New validates it: an invalid c returns the same *policy.ConfigError and changes
// nothing. MaxConcurrent changes at once: raised, the new slots go to the calls waiting,
// oldest first (before reconfigure returns, unless another goroutine is handing slots
// out), then to new calls; lowered, no call in flight is interrupted. MaxWait applies to
// the calls that arrive after the change. PriorityReserve changes at once: lowered, the
// slots it frees go to the calls waiting, as for a raised MaxConcurrent. A c whose Disabled differs from the
// configuration in force returns a *policy.ConfigError with code R4C-REG-012
// (r4c.NotLive) and key bulkhead.enabled, and changes nothing.
//
// When c differs from the configuration in force, a ConfigChanged event is published,
// whose Changed lists the attributes that changed, sorted; when it is equal, nothing is
// published. It is safe for concurrent use, with calls and with other reconfigures (which
// apply one after the other). The event listener must not reload the registry.
func (b *Bulkhead) reconfigure(c Config) error {
	b.mu.Lock()
	old := b.cur.Load()
	changed, err := changes(*old, c)
	if err != nil || len(changed) == 0 {
		b.mu.Unlock()
		return err
	}
	b.cur.Store(&c)
	// Slots taken by the calls in flight stay taken: while more calls are in flight than
	// the new limit, none is free.
	b.s.SetLimit(c.MaxConcurrent)
	b.s.SetMaxWait(c.MaxWait)
	b.s.SetReserve(c.PriorityReserve)
	b.s.SetShadow(c.Shadow)
	b.events.Publish(policy.Event{Kind: policy.ConfigChanged, Changed: changed})
	b.mu.Unlock()
	grown := c.MaxConcurrent > old.MaxConcurrent || c.PriorityReserve < old.PriorityReserve
	if grown && b.s.Enabled() {
		b.s.Wake() // outside mu: it may start asynchronous calls
	}
	return nil
}

// checkReconfigure reports the error reconfigure would return for c, without applying
// it. Safe for concurrent use.
func (b *Bulkhead) checkReconfigure(c Config) error {
	return contract.ErrOf(changes(*b.cur.Load(), c))
}

// changes validates c as a new configuration for a bulkhead running with old, and
// returns the attribute names of the settings that change, sorted.
func changes(old, c Config) ([]string, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	if c.Disabled != old.Disabled {
		return nil, r4c.Errorf(r4c.NotLive, "bulkhead.enabled", strconv.FormatBool(!c.Disabled),
			"enabled cannot change on a running bulkhead (it is %t): build a new one", !old.Disabled)
	}
	return contract.ChangedAttrs(attrs, &settings{Config: old}, &settings{Config: c}), nil
}
