// Package delay is how the policies start a call after a wait on a clock: Delayed, with
// no goroutine per waiting call, for a rate-limiter permit, a bulkhead slot or the wait
// between retries.
//
// The owner keeps a Delayed in its per-call struct and implements Starter, which
// starts the work and, when the call ends without starting it, says what the future
// completes with; an Observer, when there is one, receives each result so that the owner
// can wait and start again. ErrExpired is the cause Stop gets when a StartWithin wait runs
// out.
//
// Init prepares the call and returns its future. A wait begins with StartAfter (the work
// starts when the delay has passed) or StartWithin (the work starts when the owner calls
// Start, or the call ends with ErrExpired when the delay passes first). Whichever comes
// first of the start, Cancel, the context ending and, for StartWithin, the delay, ends the
// wait, and only that one acts: the wait's timer is stopped and, once no more waits can
// come, the hook on the context is removed, so nothing stays registered on a long-lived
// context. A context that has already ended when a wait begins, or when the work would
// start, ends the call at once.
//
// Without an Observer, the call starts once, and the result of the started work completes
// the future. With one, each result goes to the Observer, which waits again (StartAfter,
// StartWithin) or ends the call with End; the context hook is registered at the first
// wait and removed when the call ends.
package delay

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/future"
)

// ErrExpired is the cause a Delayed gives its Starter's Stop when a wait begun by
// StartWithin runs out before Start is called. It reaches callers only if Stop returns
// it; the policies return their own rejection instead.
var ErrExpired = errors.New("async: wait expired")

// A Starter is the work of a Delayed call: how to start it, and what the call's future
// completes with when it ends without starting.
type Starter[T any] interface {
	// Start starts the work, its wait over, and returns the work's future (never nil).
	// It runs once per wait that ends in a start, on the goroutine that ended the wait
	// (the clock's timer, or the caller of Delayed.Start), without the Delayed's lock.
	// It must not block. If it panics, the call ends: its future fails with async.ErrPanicked
	// (Stop is not called) and the panic goes on up that goroutine.
	Start() *async.Future[T]
	// Stop is called, at most once, when the call ends without starting again; Start is
	// not called after it. cause is async.ErrCanceled when the Delayed's future was canceled
	// (the result is then ignored: the future has already failed), the context's Err()
	// when the context ended during a wait, ErrExpired when a StartWithin wait ran out,
	// and nil when the owner called End. Stop returns the result the future completes
	// with. It must not block.
	Stop(cause error) (T, error)
}

// An Observer receives the results of the work a Delayed starts, instead of the Delayed's
// future, so that the owner can start the work again after a wait (retries).
type Observer[T any] interface {
	// Observe is called with the result of each work the Delayed starts (or is given by
	// Started), on the goroutine that completes the work's future, unless the call has
	// ended by then. Each result must lead to End or to a new wait (StartAfter,
	// StartWithin): the context hook stays registered until the call ends. It must not
	// block.
	Observe(v T, err error)
}

// Delayed is an asynchronous call that starts after a wait on a clock, unless it is
// canceled first: by cancelling its future, or by its context ending. It holds the
// call's state and is meant to be a field of the caller's per-call struct. The package
// documentation, under "Delayed calls", tells how a call goes from Init to its end.
//
// A waiting call costs no goroutine: its wait is a timer of the clock, and the context is
// watched with context.AfterFunc. Beyond the caller's struct, a call allocates its future,
// the callbacks it binds (once per call), one clock timer per wait and, for a context that
// can end, one context hook.
//
// Cancelling the future during a wait ends the call: Cancel reports true if no work has
// started yet, so it never will. Once work has started, Cancel cancels its future and
// reports false. Either way the future fails with async.ErrCanceled.
//
// Its methods are safe for concurrent use once Init has returned. A Delayed must not be
// copied after Init. The clock's AfterFunc must not wait for the function it schedules
// (it may start it at once, on another goroutine).
type Delayed[T any] struct {
	fut      future.Future[T] // the call's future, in the owner's allocation
	clk      clock.Clock
	ctx      context.Context
	s        Starter[T]
	obs      Observer[T]
	onTimer  func()         // d.timerFired, bound at the first wait
	onResult func(T, error) // d.observe, bound at the first start (with an Observer)

	mu      sync.Mutex
	state   delayState
	started bool             // work has started: Cancel reports false
	expire  bool             // the wait's delay ends it with ErrExpired rather than a start
	stale   uint32           // timer functions still to come for waits that Start ended
	timer   clock.Timer      // the wait's timer, while waiting
	stopCtx func() bool      // removes the context hook; nil when none is registered
	inner   *async.Future[T] // the started work, once it has returned
}

type delayState uint8

const (
	delayIdle    delayState = iota // not waiting: before the first wait, or work in flight (Observer)
	delayWaiting                   // a wait is in progress
	delayHanded                    // started without an Observer: the work's result is the future's
	delayEnded                     // ended: Stop called, or the future canceled
)

// Init prepares d for a call with context ctx whose waits run on clk, and returns the
// call's future. s starts and stops the work; obs receives the work's results, or is nil
// to have the first result complete the future. A nil clk is clock.System(), a nil ctx
// context.Background(). Init must be called once, before any other method, and before d
// is shared.
func (d *Delayed[T]) Init(clk clock.Clock, ctx context.Context, s Starter[T], obs Observer[T]) *async.Future[T] {
	if clk == nil {
		clk = clock.System()
	}
	if ctx == nil {
		ctx = context.Background()
	}
	d.fut.Init(stopper[T]{d})
	d.clk, d.ctx, d.s, d.obs = clk, ctx, s, obs
	return (*async.Future[T])(&d.fut)
}

// StartAfter begins a wait of delay (in nanoseconds of the clock; <= 0: due at once, as
// the clock's AfterFunc has it), after which the work starts on the clock's timer. It does
// nothing if the call is waiting, has ended, or has handed its future to started work;
// if the context has already ended, the call ends at once (Stop gets ctx.Err()).
func (d *Delayed[T]) StartAfter(delay time.Duration) { d.wait(delay, false) }

// StartWithin begins a wait for Start of at most maxWait (in nanoseconds of the clock):
// when maxWait passes first, the call ends and Stop gets ErrExpired. Otherwise as
// StartAfter.
func (d *Delayed[T]) StartWithin(maxWait time.Duration) { d.wait(maxWait, true) }

func (d *Delayed[T]) wait(delay time.Duration, expire bool) {
	d.mu.Lock()
	if d.state != delayIdle {
		d.mu.Unlock()
		return
	}
	if err := d.ctx.Err(); err != nil {
		d.end(err)
		return
	}
	d.state, d.expire = delayWaiting, expire
	if d.onTimer == nil {
		d.onTimer = d.timerFired
	}
	// Both are armed under d.mu, so that whichever ends the wait finds the other to undo.
	d.timer = d.clk.AfterFunc(delay, d.onTimer)
	if d.stopCtx == nil && d.ctx.Done() != nil {
		d.stopCtx = context.AfterFunc(d.ctx, d.contextEnded)
	}
	d.mu.Unlock()
}

// Start ends a wait with a start, on the caller's goroutine: it calls the Starter's Start
// and returns true. It returns false, and starts nothing, if the call is not waiting (the
// wait has already ended some other way), if Cancel has begun ending it, or if the
// context has ended (the call then ends as if the context had ended during the wait). A caller that holds a resource for the
// work (a slot) gives it back when Start returns false.
func (d *Delayed[T]) Start() bool {
	d.mu.Lock()
	if d.state != delayWaiting {
		d.mu.Unlock()
		return false
	}
	// Stopped under d.mu: a timer that cannot be stopped now has not yet taken the lock,
	// and will, once; it must not end a later wait.
	if !d.timer.Stop() {
		d.stale++
	}
	d.timer = nil
	if err := d.ctx.Err(); err != nil {
		d.end(err)
		return false
	}
	if d.fut.Claimed() { // canceled, and its hook has yet to run: it ends the call
		d.mu.Unlock()
		return false
	}
	d.begin()
	return true
}

// Started records f, work started outside d (a first attempt, before any wait), as if a
// Start had returned it: its result goes where a started work's goes, and Cancel cancels
// it. It does nothing but cancel f if the call is not idle.
func (d *Delayed[T]) Started(f *async.Future[T]) {
	d.mu.Lock()
	if d.state != delayIdle {
		d.mu.Unlock()
		f.Cancel()
		return
	}
	d.started = true
	d.handOff(f)
}

// End ends the call unless it has ended or Cancel has begun ending it: a wait in progress
// stops, the context hook is removed, and the future completes with the Starter's
// Stop(nil). It reports whether this call ended it. Work in flight is not canceled; its result is no longer observed. It
// does nothing once the future has been handed to started work.
func (d *Delayed[T]) End() bool {
	d.mu.Lock()
	if d.state != delayIdle && d.state != delayWaiting {
		d.mu.Unlock()
		return false
	}
	return d.end(nil)
}

// timerFired runs on the wait's timer.
func (d *Delayed[T]) timerFired() {
	d.mu.Lock()
	if d.stale > 0 { // the timer of a wait that Start ended
		d.stale--
		d.mu.Unlock()
		return
	}
	if d.state != delayWaiting {
		d.mu.Unlock()
		return
	}
	d.timer = nil
	switch err := d.ctx.Err(); {
	case err != nil: // ended, and its hook has yet to run
		d.end(err)
	case d.expire:
		d.end(ErrExpired)
	case d.fut.Claimed(): // canceled, and its hook has yet to run: it ends the call
		d.mu.Unlock()
	default:
		d.begin()
	}
}

// contextEnded is the hook on the context: it ends a wait in progress.
func (d *Delayed[T]) contextEnded() {
	d.mu.Lock()
	if d.state != delayWaiting {
		d.mu.Unlock()
		return
	}
	d.stopCtx = nil // it has run
	d.end(d.ctx.Err())
}

// begin starts the work of a wait that has just ended (its timer already dealt with).
// Called with d.mu held; it unlocks it.
func (d *Delayed[T]) begin() {
	d.started = true
	var stopCtx func() bool
	if d.obs == nil { // no wait can follow
		d.state = delayHanded
		stopCtx, d.stopCtx = d.stopCtx, nil
	} else {
		d.state = delayIdle
	}
	d.mu.Unlock()
	if stopCtx != nil {
		stopCtx()
	}
	ok := false
	defer func() {
		if !ok {
			d.panicked()
		}
	}()
	f := d.s.Start()
	ok = true
	d.mu.Lock()
	d.handOff(f)
}

// panicked ends a call whose Starter's Start panicked: the future fails with
// async.ErrPanicked (unless it was canceled meanwhile), and the panic goes on.
func (d *Delayed[T]) panicked() {
	d.mu.Lock()
	if d.state == delayEnded {
		d.mu.Unlock()
		return
	}
	d.state = delayEnded
	timer, stopCtx := d.timer, d.stopCtx
	d.timer, d.stopCtx, d.inner = nil, nil, nil
	d.mu.Unlock()
	if timer != nil {
		timer.Stop()
	}
	if stopCtx != nil {
		stopCtx()
	}
	var zero T
	d.fut.Complete(zero, async.ErrPanicked)
}

// handOff records started work f and routes its result. Called with d.mu held; it
// unlocks it.
func (d *Delayed[T]) handOff(f *async.Future[T]) {
	if d.state == delayEnded { // canceled while Start ran
		d.mu.Unlock()
		f.Cancel()
		return
	}
	d.inner = f
	if d.obs == nil {
		d.state = delayHanded
		d.mu.Unlock()
		f.OnComplete(d.fut.Complete)
		return
	}
	if d.onResult == nil {
		d.onResult = d.observe
	}
	d.mu.Unlock()
	f.OnComplete(d.onResult)
}

// observe passes a started work's result to the Observer, unless the call has ended.
func (d *Delayed[T]) observe(v T, err error) {
	d.mu.Lock()
	ended := d.state == delayEnded || d.fut.Claimed() // claimed: canceled, its hook to come
	d.mu.Unlock()
	if !ended {
		d.obs.Observe(v, err)
	}
}

// end ends the call with the Starter's Stop(cause), unless Cancel has begun completing
// the future: the cancel hook, which is to come, then ends it. It reports whether it
// ended the call. Called with d.mu held; it unlocks it.
func (d *Delayed[T]) end(cause error) bool {
	if !d.fut.Claim() {
		d.mu.Unlock()
		return false
	}
	d.stop(cause, false)
	return true
}

// stop ends the call with the Starter's Stop(cause), the future being claimed (canceled:
// by Cancel, which has completed it). Called with d.mu held; it unlocks it.
func (d *Delayed[T]) stop(cause error, canceled bool) {
	d.state = delayEnded
	timer, stopCtx := d.timer, d.stopCtx
	d.timer, d.stopCtx, d.inner = nil, nil, nil
	d.mu.Unlock()
	if timer != nil {
		timer.Stop() // one that fires anyway finds the call ended
	}
	if stopCtx != nil {
		stopCtx()
	}
	v, err := d.s.Stop(cause)
	if !canceled {
		d.fut.Finish(v, err)
	}
}

// cancel is the future's cancel hook: the future has already failed with
// async.ErrCanceled.
func (d *Delayed[T]) cancel() bool {
	d.mu.Lock()
	switch d.state {
	case delayIdle, delayWaiting:
		notStarted := !d.started
		inner := d.inner
		d.stop(async.ErrCanceled, true)
		if inner != nil {
			inner.Cancel()
		}
		return notStarted
	case delayHanded:
		d.state = delayEnded
		inner := d.inner
		d.inner = nil
		d.mu.Unlock()
		if inner != nil { // nil: Start is running, and handOff cancels its work
			inner.Cancel()
		}
		return false
	}
	d.mu.Unlock()
	return false
}

// stopper is a Delayed as its future's stopper: Cancel calls its cancel (a struct of one
// pointer fits in an interface without allocating).
type stopper[T any] struct{ d *Delayed[T] }

func (s stopper[T]) StopWork() bool { return s.d.cancel() }
