package circuitbreaker

import (
	"sync"
	"sync/atomic"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/sysclock"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker/internal/fleet"
	"github.com/resilience4go/resilience4go/policy/internal/decimal"
)

const (
	stateBits = 3
	stateMask = 1<<stateBits - 1
	// noRecord is the permit word of a call admitted while Disabled: nothing is recorded.
	noRecord = ^uint64(0)
	// shadowRecord is the permit word of a call let through in shadow mode: only the
	// recorder is told its outcome.
	shadowRecord = noRecord - 1
)

// shown says which counts the snapshot reports.
type shown uint8

const (
	showNone shown = iota
	showWindow
	showTrials
)

// Breaker is a circuit breaker. It is safe for concurrent use. Its configuration can
// change while it runs (a registry's Reload), but for its sliding window's type (see
// Config). A registry hands out the breakers it made:
// resilience.Lookup[*circuitbreaker.Breaker] with Layer.
//
// Its states, and what moves it between them:
//   - closed (Closed): calls pass. Each outcome (success or failure, slow or not) goes
//     into a sliding window. Once the window holds at least MinimumCalls outcomes, a
//     failure rate at or above FailureRateThreshold, or a slow-call rate at or above
//     SlowCallRateThreshold, opens the breaker.
//   - open (Open): calls are rejected at once with the breaker's rejection, which matches
//     ErrOpen and is never retried; the function is not called. Once WaitInOpen has
//     passed, the next call moves the breaker to half-open. That is computed on the call,
//     from the clock: there is no background goroutine and no timer.
//   - half-open (HalfOpen): PermittedInHalfOpen trial calls pass; calls beyond them are
//     rejected while the trials run. Once every trial has completed, their failure and
//     slow-call rates decide: at or above a threshold, the breaker opens again for another
//     WaitInOpen; below both, it closes with an empty window. The trials have
//     MaxWaitInHalfOpen (default 60s) from the moment the breaker went half-open: if they
//     have not all completed by then (a call stuck, a future that never completes), the
//     breaker gives up on them and is open again from that instant, for another
//     WaitInOpen. Like the move to half-open, this is found out on the next call (or the
//     next trial to complete), from the clock; the transition event carries the instant
//     the bound passed, and a call that comes after that open wait too is the first trial
//     of a new half-open. No configuration leaves the breaker half-open for good.
//   - disabled (Disabled, set by TransitionTo or Enabled(false)): every call passes and
//     nothing is recorded.
//   - forced-open (ForcedOpen, set by TransitionTo): every call is rejected.
//
// Reset returns the breaker to closed with an empty window (to disabled if its
// configuration disables it); TransitionTo moves it to any state by hand.
//
// Its sliding window: a count-based window (the default) holds the outcomes of the last
// SlidingWindowSize calls. A time-based window (SlidingWindowType(TimeBased)) holds the
// calls that completed in the last SlidingWindowSize seconds, aggregated in 1-second
// buckets of the clock; buckets drop out as the clock moves on. For count-based windows
// MinimumCalls is capped at the window size. Which outcomes go into it, and which calls
// it never sees, NewPolicy tells.
type Breaker struct {
	// Read-only after New.
	clk       clock.Clock
	system    bool // the clock is clock.System(): read it without an interface call
	timeBased bool // the window is time-based: recording an outcome needs the clock's time
	events    contract.Events
	rej       rejections
	recordIf  *contract.Predicate // RecordIf's predicate, not part of Config; nil: none

	// cur is the configuration in force, with what the breaker derives from it; replaced
	// whole by reconfigure, under mu.
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
	// shadowN counts the calls let through in shadow mode that would have been
	// rejected (Snapshot's ShadowRejected), since the breaker was built. It shares
	// notPermitted's line: both are written on the refusal path only.
	shadowN atomic.Uint64
	_       [48]byte // 64-byte cache line - 16 bytes of notPermitted and shadowN

	mu       sync.Mutex
	win      window // the closed-state sliding window
	trials   counts // HalfOpen: outcomes of the trial calls
	inFlight int    // HalfOpen: trial calls admitted and not yet completed
	// halfOpenUntil is, in HalfOpen, the clock time at which the breaker gives up on its
	// trials and is open again.
	halfOpenUntil int64
	shown         shown // which counts Snapshot reports

	// fleet is the breaker's membership of a fleet (WithFleet); nil without one.
	// Read-only after New.
	fleet fleet.Member
	// fleetEpoch is the fleet's epoch of the last fleet state applied; fleetDown says that
	// the fleet did not answer in the current half-open, which then decides locally.
	fleetEpoch uint64
	fleetDown  bool

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
	cls     contract.Classifier
	initial state // stClosed, or stDisabled when cfg.Disabled
	// timed says that a closed-state call's start and end are read on the clock: a
	// SlowCallThreshold is set, or the recorder wants latencies (see observe.Recorder). Otherwise
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
	failureRate   decimal.Decimal // FailureRateThreshold / 100
	slowRate      decimal.Decimal // SlowCallRateThreshold / 100
}

// newRules derives the rules of c for a breaker whose result predicate is recordIf and
// whose recorder is that of ev.
func newRules(c Config, recordIf *contract.Predicate, ev *contract.Events) *rules {
	r := &rules{
		cfg:           c,
		cls:           contract.Classifier{Include: c.RecordOn, Exclude: c.IgnoreOn, If: recordIf},
		initial:       stClosed,
		minCalls:      c.minimumCalls(),
		permitted:     c.PermittedInHalfOpen,
		waitInOpen:    int64(c.WaitInOpen),
		maxHalfOpen:   int64(c.MaxWaitInHalfOpen),
		slowThreshold: int64(c.SlowCallThreshold),
		failureRate:   ratioOf(c.FailureRateThreshold),
		slowRate:      ratioOf(c.SlowCallRateThreshold),
	}
	if c.Disabled {
		r.initial = stDisabled
	}
	r.timed = r.slowThreshold > 0 || ev.Timed
	r.lean = !r.timed && ev.Rec == nil
	return r
}

// New builds a breaker from opts on top of the defaults: failure rate 50%, a count-based
// window of 100 calls, 100 minimum calls, 60s open, 10 trial calls given at most 60s in
// half-open, no slow-call detection (SlowCallThreshold 0; Resilience4j's
// slowCallDurationThreshold defaults to 60s: set it for its behaviour), slow-call rate
// 100% (used only with a threshold), no error lists, enabled (see Config). An invalid
// configuration returns a *policy.ConfigError: R4C-ATR-007 for a percentage outside
// (0, 100], a count below 1, a window above 1,000,000, an unknown window type or a zero
// maxWaitInHalfOpen; R4C-ATR-004 for a negative duration. The instance id is the Name,
// else "" (no id: its errors and events name no instance).
func New(opts ...Option) (*Breaker, error) { return contract.New(defaults, build, opts) }

func build(s settings) (*Breaker, error) {
	if err := s.Config.validate(); err != nil {
		return nil, err
	}
	contract.Own(&s.IgnoreOn, &s.RecordOn)
	id := s.ID("")
	clk := s.ClockOrSystem()
	b := &Breaker{
		clk:       clk,
		system:    sysclock.Is(clk),
		timeBased: s.SlidingWindowType == TimeBased,
		events:    s.EventsOf(Layer, id),
		rej:       newRejections(id),
		recordIf:  s.recordIf,
		win:       newWindow(s.SlidingWindowType, s.SlidingWindowSize),
		shown:     showWindow,
	}
	r := newRules(s.Config, s.recordIf, &b.events)
	b.cur.Store(r)
	if r.initial == stDisabled {
		b.shown = showNone
	}
	b.win.reset(b.now())
	b.word.Store(uint64(r.initial))
	if err := b.join(&s); err != nil {
		return nil, err
	}
	return b, nil
}

// Config returns the configuration in force: the one the breaker was built with, or the
// last one a reload applied, with copies of its error lists: changing them changes
// nothing. The breaker keeps copies of the lists it was built with.
func (b *Breaker) Config() Config {
	c := b.cur.Load().cfg
	contract.Own(&c.IgnoreOn, &c.RecordOn)
	return c
}

// state returns the current state. It takes no lock.
func (b *Breaker) state() state { return state(b.word.Load() & stateMask) }

// now reads the clock.
func (b *Breaker) now() int64 {
	if b.system {
		return int64(sysclock.Now())
	}
	return int64(b.clk.Now())
}

// Snapshot returns the breaker's state and the metrics of that state (see Snapshot). A
// time-based window is first moved to the clock's current second. Safe for concurrent
// use; it takes the breaker's mutex.
func (b *Breaker) Snapshot() Snapshot {
	now := b.now()
	b.mu.Lock()
	r := b.cur.Load()
	s := Snapshot{Instance: b.events.ID, State: b.state().String(), FailureRate: -1, SlowCallRate: -1}
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
	s.ShadowRejected = b.shadowN.Load()
	b.mu.Unlock()
	s.BufferedCalls, s.FailedCalls, s.SlowCalls = c.calls, c.failed, c.slow
	return s
}
