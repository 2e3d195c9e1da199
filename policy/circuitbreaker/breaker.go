package circuitbreaker

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/kind"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
)

const (
	stateBits = 3
	stateMask = 1<<stateBits - 1
	// noRecord is the permit word of a call admitted while Disabled: nothing is recorded.
	noRecord = ^uint64(0)
)

// shown says which counts the snapshot reports.
type shown uint8

const (
	showNone shown = iota
	showWindow
	showTrials
)

// Breaker is a circuit breaker. It is safe for concurrent use. Its configuration can
// change while it runs (Reconfigure), but for its sliding window's type. *Breaker
// implements Handle.
type Breaker struct {
	// Read-only after New.
	clk       clock.Clock
	system    bool // the clock is clock.System(): read it without an interface call
	timeBased bool // the window is time-based: recording an outcome needs the clock's time
	events    kind.Events
	rej       rejections
	recordIf  *kind.Predicate // RecordIf's predicate, not part of Config; nil: none

	// cur is the configuration in force, with what the breaker derives from it; replaced
	// whole by Reconfigure, under mu.
	cur atomic.Pointer[rules]

	_ [64]byte // a whole 64-byte cache line between the read-only fields and word
	// word is the state (low stateBits bits) and a generation counter (the rest), moved on
	// every transition, under mu. A permit remembers the word that admitted its call.
	word      atomic.Uint64
	openUntil atomic.Int64 // Open: the clock time from which the next call goes half-open
	// clean is true while the state is Closed with a count-based window full of successes
	// that were not slow: recording one more such outcome changes nothing (see record).
	// Written under mu, only when it changes; read without a lock.
	clean atomic.Bool
	_     [44]byte // 64-byte cache line - 8 bytes of word - 8 of openUntil - 4 of clean
	// notPermitted counts rejections in the current state; on its own cache line, as
	// rejections write it while admitted calls read word.
	notPermitted atomic.Int64
	_            [56]byte // 64-byte cache line - 8 bytes of notPermitted

	mu       sync.Mutex
	win      window // the closed-state sliding window
	trials   counts // HalfOpen: outcomes of the trial calls
	inFlight int    // HalfOpen: trial calls admitted and not yet completed
	// halfOpenUntil is, in HalfOpen, the clock time at which the breaker gives up on its
	// trials and is open again.
	halfOpenUntil int64
	shown         shown // which counts Snapshot reports

	// pubMu hands transition events to the listener in the order of the transitions,
	// without holding mu while the listener runs. Lock order: mu, then pubMu.
	pubMu sync.Mutex
}

// rules is a configuration in force and what the breaker derives from it. It is
// read-only once stored: a call admitted under it classifies its outcome by it (its error
// lists and SlowCallThreshold), while the rates are compared with the thresholds of the
// rules in force when the outcome is recorded.
type rules struct {
	cfg     Config
	cls     kind.Classifier
	initial State // Closed, or Disabled when cfg.Disabled
	// timed says that a closed-state call's start and end are read on the clock: a
	// SlowCallThreshold is set, or the recorder wants latencies (policy.Timed). Otherwise
	// a call admitted while closed reads the clock only when its outcome needs the time
	// (a time-based window's bucket, a transition).
	timed bool
	// lean says that a success admitted while closed, with no result predicate, is
	// recorded by checking the clean flag alone: not timed and no recorder.
	lean          bool
	minCalls      int // effective MinimumCalls
	permitted     int
	waitInOpen    int64
	maxHalfOpen   int64 // MaxWaitInHalfOpen
	slowThreshold int64
	failureRate   float64
	slowRate      float64
}

// newRules derives the rules of c for a breaker whose result predicate is recordIf and
// whose recorder is that of ev.
func newRules(c Config, recordIf *kind.Predicate, ev *kind.Events) *rules {
	r := &rules{
		cfg:           c,
		cls:           kind.Classifier{Include: c.RecordOn, Exclude: c.IgnoreOn, If: recordIf},
		initial:       Closed,
		minCalls:      c.minimumCalls(),
		permitted:     c.PermittedInHalfOpen,
		waitInOpen:    int64(c.WaitInOpen),
		maxHalfOpen:   int64(c.MaxWaitInHalfOpen),
		slowThreshold: int64(c.SlowCallThreshold),
		failureRate:   c.FailureRateThreshold,
		slowRate:      c.SlowCallRateThreshold,
	}
	if c.Disabled {
		r.initial = Disabled
	}
	r.timed = r.slowThreshold > 0 || ev.Timed
	r.lean = !r.timed && ev.Rec == nil
	return r
}

// New builds a breaker from opts on top of DefaultConfig. An invalid configuration
// returns a *policy.ConfigError (see Config.Validate): R4C-ATR-007 for a percentage
// outside (0, 100], a count below 1, a window too large or a zero maxWaitInHalfOpen;
// R4C-ATR-004 for a negative duration. The instance id is
// WithInstanceID's, else the Name, else "circuitbreaker".
func New(opts ...Option) (*Breaker, error) { return kind.New(defaults, build, opts) }

func build(s settings) (*Breaker, error) {
	if err := s.Config.Validate(); err != nil {
		return nil, err
	}
	kind.Own(&s.IgnoreOn, &s.RecordOn)
	id := s.ID("circuitbreaker")
	clk := s.ClockOrSystem()
	b := &Breaker{
		clk:       clk,
		system:    clock.IsSystem(clk),
		timeBased: s.SlidingWindowType == TimeBased,
		events:    s.EventsOf(Layer, id),
		rej:       newRejections(id),
		recordIf:  s.recordIf,
		win:       newWindow(s.SlidingWindowType, s.SlidingWindowSize),
		shown:     showWindow,
	}
	r := newRules(s.Config, s.recordIf, &b.events)
	b.cur.Store(r)
	if r.initial == Disabled {
		b.shown = showNone
	}
	b.win.reset(b.now())
	b.word.Store(uint64(r.initial))
	return b, nil
}

// InstanceID returns the breaker's id, which names it in its events, rejections and
// snapshots.
func (b *Breaker) InstanceID() string { return b.events.ID }

// Config returns the configuration in force: the one the breaker was built with, or the
// last one Reconfigure applied, with copies of its error lists: changing them changes
// nothing. The breaker keeps copies of the lists it was built with.
func (b *Breaker) Config() Config {
	c := b.cur.Load().cfg
	kind.Own(&c.IgnoreOn, &c.RecordOn)
	return c
}

// State returns the current state. It takes no lock.
func (b *Breaker) State() State { return State(b.word.Load() & stateMask) }

// now reads the clock.
func (b *Breaker) now() int64 {
	if b.system {
		return int64(clock.Mono())
	}
	return int64(b.clk.Now())
}

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
func (p *permit) closed() bool { return State(p.word&stateMask) == Closed }

// acquire admits a call whose context is ctx or returns the rejection (which the caller
// returns as is). Closed: two atomic loads and no lock; the clock is read (the call's
// start) only under timed rules. Open: one clock read, no lock until WaitInOpen has
// passed. HalfOpen: the mutex, to count trial slots and to give up on trials that took
// longer than MaxWaitInHalfOpen. The events and the outcome of a rejection are published
// and recorded with ctx.
func (b *Breaker) acquire(ctx context.Context) (permit, *OpenError) {
	w := b.word.Load()
	switch State(w & stateMask) {
	case Closed:
		r := b.cur.Load()
		if !r.timed {
			return permit{word: w, r: r}, nil
		}
		return permit{word: w, start: b.now(), r: r}, nil
	case Open:
		now := b.now()
		if until := b.openUntil.Load(); now < until {
			b.rejected(ctx, b.rej.open, now, until)
			return permit{}, b.rej.open
		}
		return b.acquireLocked(ctx, now)
	case Disabled:
		return permit{word: noRecord}, nil
	case ForcedOpen:
		var now int64
		if b.events.Observed() {
			now = b.now()
		}
		b.rejected(ctx, b.rej.forcedOpen, now, now)
		return permit{}, b.rej.forcedOpen
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
	return permit{word: w, r: r}, State(w&stateMask) == Closed && !r.timed
}

// acquireLocked decides under the mutex, at clock time now: it gives up on half-open
// trials that took longer than MaxWaitInHalfOpen (the breaker is open again from then),
// moves an open breaker whose wait has passed to HalfOpen, and hands out the half-open
// trial slots. The transitions, and the rejection, are published with ctx, the context of
// the call that asks.
func (b *Breaker) acquireLocked(ctx context.Context, now int64) (permit, *OpenError) {
	b.mu.Lock()
	w := b.word.Load()
	state := State(w & stateMask)
	r := b.cur.Load()
	switch state {
	case Closed:
		b.mu.Unlock()
		return permit{word: w, start: now, r: r}, nil
	case Disabled:
		b.mu.Unlock()
		return permit{word: noRecord}, nil
	case ForcedOpen:
		b.mu.Unlock()
		b.rejected(ctx, b.rej.forcedOpen, now, now)
		return permit{}, b.rej.forcedOpen
	}
	// At most two transitions: half-open→open when the trials took too long, then
	// open→half-open when the open wait that followed has passed too.
	var reopened, halfOpened transition
	if state == HalfOpen && now >= b.halfOpenUntil {
		reopened = b.transitionLocked(Open, b.halfOpenUntil)
		state = Open
	}
	if state == Open {
		if until := b.openUntil.Load(); now < until {
			b.unlockAndPublish(ctx, reopened, transition{})
			b.rejected(ctx, b.rej.open, now, until)
			return permit{}, b.rej.open
		}
		halfOpened = b.transitionLocked(HalfOpen, now)
		w = b.word.Load()
	}
	// HalfOpen: a trial slot is free while admitted and completed trials are fewer than
	// PermittedInHalfOpen.
	if b.inFlight+b.trials.calls < r.permitted {
		b.inFlight++
		b.unlockAndPublish(ctx, reopened, halfOpened)
		return permit{word: w, start: now, r: r}, nil
	}
	b.unlockAndPublish(ctx, reopened, halfOpened)
	b.rejected(ctx, b.rej.halfOpen, now, now)
	return permit{}, b.rej.halfOpen
}

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
	if kind.Counts(&r.cls, pred, v, err) {
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
	if p.word == noRecord {
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
				now = int64(clock.Mono()) // the system clock, which takes no lock
			}
			tr = b.transitionLocked(Open, now)
		} else {
			b.setCleanLocked(b.win.clean())
		}
	} else if now >= b.halfOpenUntil { // HalfOpen, for longer than MaxWaitInHalfOpen
		// The breaker gave up on its trials at halfOpenUntil: it is open from then on, and
		// this outcome, which came too late, is not recorded.
		tr = b.transitionLocked(Open, b.halfOpenUntil)
	} else { // HalfOpen
		b.inFlight--
		if !ignored {
			b.trials.add(o)
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
	out := policy.Outcome{Result: policy.ResultSucceeded, Err: err}
	if p.r.timed || !p.closed() {
		lat := sat.Left(time.Duration(now), time.Duration(p.start))
		out.Slow = p.r.slowThreshold > 0 && lat > time.Duration(p.r.slowThreshold)
		if b.events.Timed {
			out.Latency = lat
		}
	}
	switch {
	case ignored:
		out.Result = policy.ResultIgnored
	case o&failedBit != 0:
		out.Result = policy.ResultFailed
	}
	b.events.Rec.Record(ctx, out)
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

// exceeded reports whether c's failure rate or slow-call rate is at or above its
// threshold. c holds at least one call.
func (r *rules) exceeded(c counts) bool {
	failure, slow := c.rates(1)
	return failure >= r.failureRate || slow >= r.slowRate
}

// setCleanLocked sets the clean flag, under mu, writing it only when it changes (it
// shares its cache line with word, which every call reads).
func (b *Breaker) setCleanLocked(c bool) {
	if b.clean.Load() != c {
		b.clean.Store(c)
	}
}

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

// rejected counts the rejection err of the call whose context is ctx, records it
// (ResultRejected) and publishes it, with ctx, at clock time now; until is when an open
// breaker lets a trial through (now when unknown), from which the event's RetryAfter is
// worked out, only when someone listens.
func (b *Breaker) rejected(ctx context.Context, err *OpenError, now, until int64) {
	b.notPermitted.Add(1)
	if b.events.Rec != nil {
		b.events.Rec.Record(ctx, policy.Outcome{Result: policy.ResultRejected, Err: err})
	}
	if b.events.Observed() {
		b.events.PublishCtx(ctx, policy.Event{Kind: EventRejected,
			At: time.Duration(now), RetryAfter: sat.Left(time.Duration(until), time.Duration(now)), Err: err})
	}
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

// Snapshot returns the breaker's state and the metrics of that state (see Snapshot). A
// time-based window is first moved to the clock's current second. Safe for concurrent
// use; it takes the breaker's mutex.
func (b *Breaker) Snapshot() Snapshot {
	now := b.now()
	b.mu.Lock()
	r := b.cur.Load()
	s := Snapshot{Instance: b.events.ID, State: b.State(), FailureRate: -1, SlowCallRate: -1}
	var c counts
	switch b.shown {
	case showWindow:
		b.win.slide(now)
		c = b.win.total
		s.FailureRate, s.SlowCallRate = c.rates(r.minCalls)
	case showTrials:
		c = b.trials
		s.FailureRate, s.SlowCallRate = c.rates(r.permitted)
	}
	s.NotPermittedCalls = int(b.notPermitted.Load())
	b.mu.Unlock()
	s.BufferedCalls, s.FailedCalls, s.SlowCalls = c.calls, c.failed, c.slow
	return s
}
