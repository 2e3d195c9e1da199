// Package bulkhead is resilience4go's bulkhead (layer bulkhead.Layer, the innermost
// of the built-in layers in the default order): at most MaxConcurrent calls are in flight
// at once; the others wait for a slot, up to MaxWait, or are rejected with ErrFull.
//
// A call holds a slot from its start until it returns (synchronous calls, also when they
// panic) or until its future completes (asynchronous calls). The free slots are one atomic
// counter: a call that finds a slot free and nobody waiting takes it with one
// compare-and-swap and reads nothing else, and a call rejected at once (MaxWait 0, the
// default) only reads the configuration in force besides; neither allocates.
//
// Waiting calls queue in arrival order (FIFO). A released slot goes to the oldest waiter;
// while anyone waits, newcomers queue behind them instead of taking a slot that is
// released in between (no barging). A synchronous waiter blocks on the caller's goroutine
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
//
// Events: EventRejected for every rejection of a call that came with a live context
// (Wait = how long the call waited before it), EventWaited for a call that got its
// slot after waiting (Wait = how long). Admitted calls that did not wait publish nothing.
// Waits are measured on the bulkhead's clock and saturate: never negative, however large
// MaxWait is. Each event reaches the recorder (Observe) with the context of the call it
// concerns; context.Background() for TryAcquire, which has none, and for ConfigChanged.
//
// Outcomes: with a recorder (Observe, or a registry's observer), each admission decision
// is recorded once, with the call's context: observe.ResultAdmitted with Wait = how long the
// call waited for its slot (0 when it did not wait), or observe.ResultRejected with Err =
// the rejection, also for a call refused on arrival for its nil or done context (recorded
// with context.Background() for a nil one). TryAcquire and Acquire record as the
// decorated calls do. An asynchronous call whose future is canceled while it waits was
// neither let in nor refused: nothing is recorded for it. A disabled bulkhead records
// nothing. Without a recorder, recording costs a nil check.
//
// Defaults: MaxConcurrent 25, MaxWait 0 (waiting is opt-in, as for the rate limiter),
// Enabled true.
//
// # Live reconfiguration
//
// Reconfigure replaces the configuration of a running bulkhead. MaxConcurrent changes at
// once: raising it hands the new slots to the waiting calls, oldest first, and then to
// new calls; lowering it never interrupts a call in flight, it only makes new calls wait
// (or be rejected) until the calls in flight are fewer than the new limit. MaxWait
// applies to the calls that arrive after the change; a call already waiting keeps the
// MaxWait it arrived with. Whether the bulkhead is enabled cannot change on a running
// bulkhead: Reconfigure refuses that change with R4C-REG-012 (see Reconfigure). An
// invalid configuration is refused with the error New would return and changes nothing.
// A change publishes a ConfigChanged event naming the attributes that changed
// ("maxConcurrent", "maxWait"); a configuration equal to the one in force publishes
// nothing. CheckReconfigure checks a configuration the same way without applying it.
package bulkhead

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/kind"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/rejections"
	"github.com/resilience4go/resilience4go/internal/waitq"
	"github.com/resilience4go/resilience4go/policy"
)

// Bulkhead limits how many calls are in flight at once. It is safe for concurrent use.
// Its MaxConcurrent and MaxWait can change while it runs (Reconfigure); whether it is
// enabled is fixed when it is built.
type Bulkhead struct {
	// Read-only after New.
	enabled bool
	clk     clock.Clock
	events  kind.Events
	rej     rejections.Set[*FullError]
	ev      waitq.Events[*FullError] // the wait events and rejections

	// cur is the configuration in force, replaced whole by Reconfigure (under mu); the
	// calls that find a slot free at once never read it.
	cur atomic.Pointer[limits]
	mu  sync.Mutex // serializes Reconfigure

	_      [64]byte     // a whole 64-byte cache line between the fields above and the counters
	free   atomic.Int64 // slots not taken; below 0 while more calls are in flight than MaxConcurrent
	queued atomic.Int64 // waiters in the queue; changed by q, read without its lock
	_      [48]byte     // 64-byte cache line - 8 bytes of free - 8 of queued

	q waitq.Queue[struct{}] // the FIFO queue of waiters; changes queued
}

// limits is a configuration in force, read-only once stored.
type limits struct {
	cfg Config
	sw  waitq.Sync[struct{}, *FullError] // the blocking wait, with cfg's MaxWait
}

// New builds a bulkhead from opts. An invalid configuration returns a *policy.ConfigError:
// R4C-ATR-007 (MaxConcurrent < 1), R4C-ATR-004 (MaxWait < 0). The instance id is
// WithInstanceID's, else the Name, else "bulkhead".
func New(opts ...Option) (*Bulkhead, error) { return kind.New(defaults, build, opts) }

func build(s settings) (*Bulkhead, error) {
	if err := s.Config.Validate(); err != nil {
		return nil, err
	}
	id := s.ID("bulkhead")
	b := &Bulkhead{
		enabled: !s.Disabled,
		clk:     s.ClockOrSystem(),
		events:  s.EventsOf(Layer, id),
		rej:     rejections.New(func(cause error) *FullError { return newFull(id, cause) }),
	}
	b.ev = waitq.Events[*FullError]{Pub: &b.events, Rej: &b.rej, Clock: b.clk,
		Rejected: EventRejected, Waited: EventWaited}
	b.free.Store(int64(s.MaxConcurrent))
	b.q.Init(&b.queued, b.room)
	b.cur.Store(b.limitsOf(s.Config))
	return b, nil
}

// limitsOf returns c in force.
func (b *Bulkhead) limitsOf(c Config) *limits {
	return &limits{cfg: c, sw: waitq.Sync[struct{}, *FullError]{
		Events: b.ev, Queue: &b.q, MaxWait: c.MaxWait, Recheck: b.recheck,
		GiveBack: func(struct{}) { b.release() },
	}}
}

// Reconfigure applies c to the running bulkhead. c is validated as New validates it: an
// invalid c returns the same *policy.ConfigError (R4C-ATR-007 for MaxConcurrent < 1,
// R4C-ATR-004 for MaxWait < 0) and changes nothing. What changes live:
//   - MaxConcurrent, at once. Raised, the new slots go to the calls waiting, oldest first
//     (before Reconfigure returns, unless another goroutine is handing slots out), then
//     to new calls. Lowered, no call in flight is interrupted: new calls wait (or are
//     rejected) until the calls in flight are fewer than the new limit.
//   - MaxWait, for the calls that arrive after the change; calls already waiting keep the
//     MaxWait they arrived with.
//
// Whether the bulkhead is enabled cannot change on a running bulkhead: a disabled
// bulkhead's callers take no slot, so neither the slots held across the change nor
// TryAcquire and Release pairs could be counted right. A c whose Disabled differs from
// the configuration in force returns a *policy.ConfigError with code R4C-REG-012
// and key bulkhead.enabled, and changes nothing; build a new
// bulkhead instead.
//
// When c differs from the configuration in force, a ConfigChanged event is published,
// whose Changed lists the attributes that changed, sorted ("maxConcurrent", "maxWait");
// when it is equal, nothing is published. It is safe for concurrent use, with calls and
// with other Reconfigures (which apply one after the other). The event listener must not
// call Reconfigure.
func (b *Bulkhead) Reconfigure(c Config) error {
	b.mu.Lock()
	old := b.cur.Load()
	changed, err := changes(old.cfg, c)
	if err != nil || len(changed) == 0 {
		b.mu.Unlock()
		return err
	}
	b.cur.Store(b.limitsOf(c))
	// Slots taken by the calls in flight stay taken: free moves by the difference, and
	// drops below 0 while more calls are in flight than the new limit.
	raised := c.MaxConcurrent > old.cfg.MaxConcurrent
	b.free.Add(int64(c.MaxConcurrent - old.cfg.MaxConcurrent))
	b.events.Publish(policy.Event{Kind: policy.ConfigChanged, Changed: changed})
	b.mu.Unlock()
	if raised && b.enabled && b.queued.Load() != 0 {
		b.q.Dispatch() // outside mu: it may start asynchronous calls
	}
	return nil
}

// CheckReconfigure reports the error Reconfigure would return for c, without applying
// it: nil, the *policy.ConfigError of an invalid c, or one with code R4C-REG-012 when c
// changes whether the bulkhead is enabled. Safe for concurrent use.
func (b *Bulkhead) CheckReconfigure(c Config) error {
	return kind.ErrOf(changes(b.cur.Load().cfg, c))
}

// changes validates c as a new configuration for a bulkhead running with old, and
// returns the attribute names of the settings that change, sorted.
func changes(old, c Config) ([]string, error) {
	return kind.Changed(c, func(changed *kind.Changes) error {
		if c.Disabled != old.Disabled {
			return r4c.Errorf(r4c.NotLive, "bulkhead.enabled", strconv.FormatBool(!c.Disabled),
				"enabled cannot change on a running bulkhead (it is %t): build a new one", !old.Disabled)
		}
		changed.Add(c.MaxConcurrent != old.MaxConcurrent, "maxConcurrent")
		changed.Add(c.MaxWait != old.MaxWait, "maxWait")
		return nil
	})
}

// Clock returns the bulkhead's time source.
func (b *Bulkhead) Clock() clock.Clock { return b.clk }

// Rejection returns the bulkhead's rejection error (a *FullError matching ErrFull), for
// callers that use TryAcquire and need an error to return.
func (b *Bulkhead) Rejection() error { return b.rej.Plain }

// TryAcquire takes a slot if one is free now and nobody is waiting for one, and reports
// whether it did, whatever MaxWait is. A refusal publishes an EventRejected event. Its
// outcome is recorded with context.Background(): ResultAdmitted (Wait 0) or
// ResultRejected. A slot taken must be given back with Release. It never allocates. A
// disabled bulkhead always returns true.
func (b *Bulkhead) TryAcquire() bool {
	if !b.enabled {
		return true
	}
	if b.tryAcquire() {
		b.ev.Admit(context.Background())
		return true
	}
	b.ev.Reject(context.Background(), 0, b.rej.Plain)
	return false
}

// Acquire takes a slot, waiting for it on the caller's goroutine up to MaxWait (the one
// in force when it is called), in FIFO order. It returns nil once the slot is the caller's (give it back with Release), or the
// bulkhead's rejection, which matches ErrFull:
//   - at once, without taking a slot free or publishing anything, when ctx is nil or
//     already done (the error also matches ctx's error, or policy.ErrNilContext);
//   - at once, when no slot is free and MaxWait is 0;
//   - after MaxWait on the bulkhead's clock;
//   - when ctx ends during the wait (the error also matches ctx's error).
//
// A call that waited publishes EventWaited, a rejection of a live ctx
// EventRejected, both with ctx. Its outcome is recorded with ctx: ResultAdmitted with
// the wait, or ResultRejected (also on arrival). Acquire allocates nothing unless it has
// to wait (or ctx is nil). A disabled bulkhead returns nil at once, but for a nil or done
// ctx, whose error it returns as is.
func (b *Bulkhead) Acquire(ctx context.Context) error {
	if !b.enabled {
		return decorate.ContextErr(ctx)
	}
	return b.acquire(ctx)
}

// Release gives back a slot taken by TryAcquire or Acquire, handing it to the oldest
// waiter if there is one. Call it exactly once per slot taken: an extra Release adds a
// slot that was never configured. It does nothing on a disabled bulkhead.
func (b *Bulkhead) Release() {
	if b.enabled {
		b.release()
	}
}

// tryAcquire takes a free slot unless someone is waiting (no barging).
func (b *Bulkhead) tryAcquire() bool {
	if b.queued.Load() != 0 {
		return false
	}
	return b.takeFree()
}

// takeFree takes a free slot, if any.
func (b *Bulkhead) takeFree() bool {
	for {
		f := b.free.Load()
		if f <= 0 {
			return false
		}
		if b.free.CompareAndSwap(f, f-1) {
			return true
		}
	}
}

// release gives a slot back. A waiter enqueued concurrently is not missed: it raises
// queued before it reads free (recheck), and release raises free before it reads queued,
// so at least one of them sees the other and hands the slot over.
func (b *Bulkhead) release() {
	b.free.Add(1)
	if b.queued.Load() != 0 {
		b.q.Dispatch()
	}
}

// acquire takes a slot for a call with ctx, after the arrival check: a nil or done ctx
// takes nothing and publishes nothing. It records the call's outcome.
func (b *Bulkhead) acquire(ctx context.Context) error {
	if err := decorate.ContextErr(ctx); err != nil {
		return b.ev.Refuse(ctx, err)
	}
	if b.tryAcquire() {
		b.ev.Admit(ctx)
		return nil
	}
	l := b.cur.Load()
	if l.cfg.MaxWait == 0 {
		b.ev.Reject(ctx, 0, b.rej.Plain)
		return b.rej.Plain
	}
	_, err := l.sw.Wait(ctx)
	return err
}

// room takes a free slot for a waiter: the queue's step.
func (b *Bulkhead) room() (struct{}, bool) { return struct{}{}, b.takeFree() }

// recheck hands over a slot released while a waiter was being queued (see release).
func (b *Bulkhead) recheck() {
	if b.free.Load() > 0 {
		b.q.Dispatch()
	}
}
