package ratelimit

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/rejections"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// Limiter is a GCRA rate limiter: Permits per Period, with a burst of Permits (see the
// package documentation). It is safe for concurrent use. Its configuration can change
// while it runs (Reconfigure): each call reads it once, whole. With a backend
// (WithBackend), each call asks the backend's store instead of the in-process schedule:
// one round trip, with the allocations of the backend's client; rejections are still the
// limiter's own preallocated errors. A zero Limiter, never built with New, refuses every
// call.
//
// With a registry's observer (resilience.WithObserver), each decision is recorded once,
// with the call's context: observe.ResultAdmitted with Wait the wait the call reserved (0
// when its permit was free at once), or observe.ResultRejected with Err the refusal (also
// for a call refused on arrival for its nil or done context). The methods that take no
// context record with context.Background(); Acquire records once the permit is the
// caller's, or once the call is refused; Reserve when it reserves (a later Cancel records
// nothing). Every event goes to the recorder too, with the context of the call that
// caused it (a ConfigChanged, and the events of a backend's stores, with
// context.Background()). A disabled limiter, and a zero one, record nothing; with a
// recorder, a decision allocates nothing more.
type Limiter struct {
	// Read-only after New, but rate, which Reconfigure replaces whole.
	rate   atomic.Pointer[rate] // the configuration in force; nil for a zero Limiter
	base   rlcore.Base          // the clock, and the lock and count of the schedule's conversions
	events contract.Events      // the instance id, the clock, the listener and the recorder
	relay  policy.Listener      // what a backend's stores publish through (rlcore.StoreListener)
	rej    rejections.Set[*ExceededError]
	nilCtx *ExceededError  // the rejection of a call with a nil context
	store  backend.Store   // the backend's state of this limiter; nil: the in-process schedule below
	taker  rlcore.Taker    // store's in-process decisions of the calls that never wait, when it has them; nil otherwise
	shares backend.Backend // the backend, whose LocalShare, read at each decision in-process, is the share of the quota then; nil without one
	mu     sync.Mutex      // serializes Reconfigure
	// retryAt is, with a backend, the clock time at which the store said, at its last
	// refusal, that the next permit is free: what the limiter's rejections report.
	retryAt atomic.Int64
	// waiting counts the calls that hold a reserved permit and wait for its time (Snapshot's
	// Waiting); touched on the waiting paths only.
	waiting atomic.Int64
	// shadowRejected counts the calls let through in shadow mode that would have been
	// refused (Snapshot's ShadowRejected); touched on the refusal paths only.
	shadowRejected atomic.Uint64

	_     [64]byte        // a whole 64-byte cache line: the schedule never shares one with the fields above
	slots rlcore.Schedule // the TAT and the freed slots
	_     [48]byte        // 64-byte cache line - 16 bytes of slots
	more  rlcore.Multi    // the TATs of the further windows (Window), when there are any
}

// New builds a limiter from opts. Permits and Period are required. An invalid
// configuration returns a *policy.ConfigError: R4C-ATR-003 (permits < 1), R4C-ATR-002
// (period ≤ 0), R4C-REG-001 (period shorter than 1ns per permit), R4C-ATR-004
// (maxWait < 0); a backend's Bind error is returned as it is. The instance id is the
// Name; without one, the limiter has none ("").
func New(opts ...Option) (*Limiter, error) { return contract.New(defaults, build, opts) }

func build(s settings) (*Limiter, error) {
	if err := rlcore.Validate(s.Config, s.Given); err != nil {
		return nil, err
	}
	id := s.ID("")
	l := &Limiter{
		events: s.EventsOf(Layer, id),
		nilCtx: newExceeded(id, policy.ErrNilContext),
	}
	l.base.SetClock(s.ClockOrSystem())
	l.rej = rejections.New(func(cause error) *ExceededError {
		e := newExceeded(id, cause)
		e.src = l
		return e
	})
	l.nilCtx.src = l
	l.relay = rlcore.StoreListener(&l.events)
	if err := l.bind(s.Backend); err != nil {
		return nil, err
	}
	// TAT 0 (the clock's origin, at or before now): the full burst is free.
	r := l.newRate(s.Config)
	l.more.Use(&r.Rate)
	l.rate.Store(r)
	return l, nil
}

// mode is how a limiter that is not direct takes permits: disabled (every call passes and
// nothing changes), backed (its backend's store decides) or unbuilt (a zero Limiter). The
// rate picks it, so that the methods of an enabled in-process limiter test one flag and
// then run GCRA on its schedule. n is the number of permits, 1..Permits.
//
// Each method reports what it decides as the limiter's methods do (see admitted and
// reject), with ctx, the call's context (context.Background() for the methods that have
// none), except reserve, which leaves an admission to its caller.
type mode interface {
	tryAcquire(l *Limiter, r *rate, n int) error
	acquire(ctx context.Context, l *Limiter, r *rate, n int) error
	reserve(ctx context.Context, l *Limiter, r *rate, n int) (rlcore.Reservation, error)
	available(l *Limiter, r *rate) int
}

// cur returns the configuration in force: l's rate, or unbuiltRate for a zero Limiter.
func (l *Limiter) cur() *rate {
	if r := l.rate.Load(); r != nil {
		return r
	}
	return &unbuiltRate
}

// disabled is the mode of a limiter that is not enabled: every call passes and nothing
// changes.
type disabled struct{}

func (disabled) tryAcquire(*Limiter, *rate, int) error { return nil }
func (disabled) acquire(ctx context.Context, _ *Limiter, _ *rate, _ int) error {
	return decorate.ContextErr(ctx)
}
func (disabled) reserve(context.Context, *Limiter, *rate, int) (rlcore.Reservation, error) {
	return rlcore.Reservation{OK: true}, nil
}
func (disabled) available(_ *Limiter, r *rate) int { return r.Cfg.Permits }

// unbuilt is the mode of a zero Limiter, never built with New: it admits nothing.
type unbuilt struct{}

func (unbuilt) tryAcquire(*Limiter, *rate, int) error               { return errZero }
func (unbuilt) acquire(context.Context, *Limiter, *rate, int) error { return errZero }
func (unbuilt) reserve(context.Context, *Limiter, *rate, int) (rlcore.Reservation, error) {
	return rlcore.Reservation{}, errZero
}
func (unbuilt) available(*Limiter, *rate) int { return 0 }

// unbuiltRate is the rate of a zero Limiter: it admits nothing.
var unbuiltRate = rate{other: unbuilt{}}

// rejection returns the limiter's one rejection error; errZero for a zero Limiter.
func (l *Limiter) rejection() error {
	if !l.built() {
		return errZero
	}
	return l.rej.Plain
}

// built reports whether l was built with New: a zero Limiter has no clock.
func (l *Limiter) built() bool { return l.base.Clk != nil }

// offErr is the result of a call through a limiter that is not enabled: nil when it is
// disabled, the zero Limiter's rejection when it was never built.
func (l *Limiter) offErr() error {
	if !l.built() {
		return errZero
	}
	return nil
}

// now reads the clock once.
func (l *Limiter) now() int64 { return l.base.Now() }
