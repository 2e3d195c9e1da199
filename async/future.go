// Package async provides Future, a result that arrives later, and Delayed, a call that
// starts after a wait on a clock.
//
// A Future is completed exactly once, with a value or an error. It costs no goroutine:
// work that completes it may run on a goroutine started by Go, on a clock timer, or on any
// goroutine that holds the completion function returned by NewPromise. Futures compose with
// context.Context: Await takes a context, and cancelling a future asks its work to stop.
// Map, Then and All build a future out of others; cancelling it cancels them. A
// completer that must act before completing (publish, record) claims the future first
// with a Promise: that is machinery for policy authors, see NewClaimablePromise.
//
// # Delayed calls
//
// Delayed starts a call after a wait on a clock.Clock, with no goroutine per waiting call:
// the policies use it to wait for a rate-limiter permit, for a bulkhead slot, or between
// retries. The owner keeps a Delayed in its per-call struct and implements Starter, which
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
package async

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// ErrCanceled is the error of a future completed by Cancel, whether Cancel was called on
// it or reached it from a future built on it (Map, Then, All). Test for it with
// errors.Is, as for context.Canceled.
var ErrCanceled = errors.New("async: future canceled")

// ErrPanicked is the error of a future whose work panicked when it was started later,
// on a goroutine that is not the caller's (a Delayed call started by a clock timer or by
// the release of a slot): the future fails with ErrPanicked, so that its awaiters do not
// wait for ever, and the panic goes on up that goroutine. Test for it with errors.Is.
var ErrPanicked = errors.New("async: the started work panicked")

// Future is the result of an asynchronous computation. Its zero value is not usable: make
// one with NewPromise, NewCancelablePromise, Go, Completed or Failed. All methods are safe
// for concurrent use.
//
// A nil *Future (e.g. returned by a function that forgot to return one) acts as a future
// failed with ErrNilFuture: Done is closed, Await and Result return ErrNilFuture,
// OnComplete calls its function with it, and Cancel returns false. No method panics.
type Future[T any] struct {
	// state holds the st* bits. The completion that sets stClaimed is the only one; it
	// writes val and err, then sets stDone, and then, when stHooks is set, takes mu to
	// close done and run the callbacks.
	state atomic.Uint32
	mu    sync.Mutex     // guards done, cb and more while pending
	wg    sync.WaitGroup // 1 while pending: Await with a context that never ends waits on it
	done  chan struct{}  // made by the first Done while pending; closedChan once complete
	val   T
	err   error
	cb    func(T, error)    // the first OnComplete callback
	more  *[]func(T, error) // the others, in order
	stop  stopper           // stops the work on Cancel; nil for a plain promise
}

// The bits of Future.state.
const (
	stClaimed uint32 = 1 << iota // a completion has begun: every later one is ignored
	stDone                       // val and err are set
	stHooks                      // a callback or the done channel waits: the completion takes mu
	stFired                      // a goCall's AfterFunc functions have run; set under mu
	stOwned                      // Promise.Claim set stClaimed: the next Promise.Complete completes
)

// stopper stops the work of a future that Cancel completed, and reports whether it had
// not started yet.
type stopper interface{ stopWork() bool }

// cancelHook is the onCancel function of NewCancelablePromise as a stopper (a func value
// fits in an interface without allocating).
type cancelHook func() bool

func (h cancelHook) stopWork() bool { return h() }

// init makes f pending, with s (may be nil) to stop its work on Cancel.
func (f *Future[T]) init(s stopper) {
	f.stop = s
	f.wg.Add(1)
}

// NewPromise returns a pending future and the function that completes it. Only the first
// call of complete has an effect; later calls (and calls after Cancel) are ignored.
func NewPromise[T any]() (*Future[T], func(T, error)) {
	f := &Future[T]{}
	f.init(nil)
	return f, f.complete
}

// NewCancelablePromise is NewPromise for work that can be stopped. Cancel calls onCancel
// once, after completing the future with ErrCanceled; onCancel stops the work and
// reports whether it had not started yet (true: it never will). onCancel must not block.
func NewCancelablePromise[T any](onCancel func() (notStarted bool)) (*Future[T], func(T, error)) {
	f := &Future[T]{}
	var s stopper
	if onCancel != nil {
		s = cancelHook(onCancel)
	}
	f.init(s)
	return f, f.complete
}

// Completed returns a future already completed with v.
func Completed[T any](v T) *Future[T] {
	f := &Future[T]{val: v}
	f.state.Store(stClaimed | stDone)
	return f
}

// Failed returns a future already completed with err.
func Failed[T any](err error) *Future[T] {
	f := &Future[T]{err: err}
	f.state.Store(stClaimed | stDone)
	return f
}

var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// Go runs fn on a new goroutine with a context derived from ctx and returns its future.
// Cancel cancels that context (the work has started, so Cancel returns false) and
// completes the future with ErrCanceled; fn's own result is then discarded. The derived
// context is canceled too when fn returns or exits, as one from context.WithCancel whose
// cancel function is deferred.
//
// With ctx context.Background() or context.TODO(), a call costs two allocations: one
// holding the future, its goroutine's state and the context given to fn, and the
// goroutine's start (a goroutine sending (T, error) to a buffered channel costs three).
// That context has no values and no deadline, and implements AfterFunc, so that the
// contexts fn derives from it with the context package follow it without a goroutine
// each; one derived through a context of another type (e.g. context.WithTimeout of a
// context.WithValue of it) costs a goroutine while both are live, as the context package
// makes for any parent it does not know. With any other ctx, fn gets
// context.WithCancel(ctx), which adds two allocations. A panic of fn is not recovered: it
// ends the program, as a panic on any goroutine does.
func Go[T any](ctx context.Context, fn func(context.Context) (T, error)) *Future[T] {
	g := &goCall[T]{fn: fn}
	if neverEnds(ctx) {
		g.init(started{})
		go g.run()
		return &g.Future
	}
	var cancel context.CancelFunc
	g.ctx, cancel = context.WithCancel(ctx)
	g.init(cancelOnStop(cancel))
	go g.runWith(cancel)
	return &g.Future
}

// started is the stopper of the future of Go whose goroutine is fn's context: the work
// has started, and completing the future cancels that context.
type started struct{}

func (started) stopWork() bool { return false }

// cancelOnStop is the stopper of the future of Go whose fn has a context derived with
// context.WithCancel: its cancel function (a func value fits in an interface without
// allocating).
type cancelOnStop context.CancelFunc

func (c cancelOnStop) stopWork() bool {
	c()
	return false
}

// iface is the layout of a non-empty interface value: its itab and its data.
type iface struct{ tab, data unsafe.Pointer }

// The itabs of context.Background() and context.TODO() as a context.Context.
var bgTab, todoTab = itab(context.Background()), itab(context.TODO())

func itab(ctx context.Context) unsafe.Pointer { return (*iface)(unsafe.Pointer(&ctx)).tab }

// neverEnds reports whether ctx is context.Background() or context.TODO(). Their dynamic
// types have no fields, so a context of one of those types is that context: comparing the
// itabs is ctx == context.Background() || ctx == context.TODO() without the runtime's
// general interface comparison.
func neverEnds(ctx context.Context) bool {
	t := itab(ctx)
	return t == bgTab || t == todoTab
}

// goCall is the future of Go and the state of its goroutine, in one allocation. For a
// parent context.Background() or context.TODO(), it is also the context given to fn: one
// that is canceled when the future completes.
//
// Its size is a size class of the allocator (128 bytes for a T of one word): the cancel
// function of a derived context is the future's stopper and an argument of its
// goroutine, and "the afters have run" is a bit of the future's state.
type goCall[T any] struct {
	Future[T]
	ctx    context.Context // the context derived with context.WithCancel; nil when the goCall is fn's context
	fn     func(context.Context) (T, error)
	afters map[*afterFunc]struct{} // AfterFunc's functions not run nor stopped; under mu
}

// afterFunc is one function registered with goCall.AfterFunc.
type afterFunc struct{ fn func() }

// run is the goroutine of Go when the goCall is fn's context.
func (g *goCall[T]) run() {
	fn := g.fn
	g.fn = nil
	v, err := fn(g)
	if g.state.Or(stClaimed)&stClaimed == 0 {
		g.finish(v, err)
	}
}

// runWith is the goroutine of Go when fn's context is g.ctx, whose cancel function is
// cancel.
func (g *goCall[T]) runWith(cancel context.CancelFunc) {
	defer cancel()
	fn := g.fn
	g.fn = nil
	v, err := fn(g.ctx)
	g.complete(v, err)
}

// Deadline is none: the parent, context.Background() or context.TODO(), has none.
func (g *goCall[T]) Deadline() (deadline time.Time, ok bool) { return }

// Err is context.Canceled once the future has completed (fn has returned, or the future
// was canceled) and Done is closed; nil before.
func (g *goCall[T]) Err() error {
	if g.state.Load()&stDone == 0 {
		return nil
	}
	select {
	case <-g.Done():
		return context.Canceled
	default: // completing: Done is not closed yet
		return nil
	}
}

// Value is nil for every key: the parent, context.Background() or context.TODO(), holds
// no values.
func (g *goCall[T]) Value(any) any { return nil }

// AfterFunc arranges for fn to run on a goroutine of its own once the context is
// canceled, as context.AfterFunc does; contexts derived from it use it, rather than a
// goroutine each, to follow it. Stopping forgets fn.
func (g *goCall[T]) AfterFunc(fn func()) (stop func() bool) {
	a := &afterFunc{fn: fn}
	g.mu.Lock()
	switch {
	case g.state.Load()&stFired != 0:
		g.mu.Unlock()
		go fn()
		return func() bool { return false }
	case g.afters == nil:
		g.afters = map[*afterFunc]struct{}{a: {}}
		g.mu.Unlock()
		g.OnComplete(g.runAfters)
	default:
		g.afters[a] = struct{}{}
		g.mu.Unlock()
	}
	return func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		if _, ok := g.afters[a]; !ok {
			return false
		}
		delete(g.afters, a)
		return true
	}
}

// runAfters starts the AfterFunc functions not stopped, once the future completes.
func (g *goCall[T]) runAfters(T, error) {
	g.mu.Lock()
	afters := g.afters
	g.afters = nil
	g.state.Or(stFired)
	g.mu.Unlock()
	for a := range afters {
		go a.fn()
	}
}

func (g *goCall[T]) String() string { return "async.Go context" }

func (f *Future[T]) complete(v T, err error) {
	if f.claim() {
		f.finish(v, err)
	}
}

// claim begins the completion of f, and reports whether this goroutine has it (f was
// pending and no completion had begun): it then calls finish; Cancel and every other
// completion do nothing.
func (f *Future[T]) claim() bool { return f.state.Or(stClaimed)&stClaimed == 0 }

// claimed reports whether a completion of f has begun: Cancel, a completion, or a claim.
func (f *Future[T]) claimed() bool { return f.state.Load()&stClaimed != 0 }

// finish completes the future, whose completion this goroutine has claimed.
func (f *Future[T]) finish(v T, err error) {
	f.val, f.err = v, err
	f.stop = nil
	hooks := f.state.Or(stDone)&stHooks != 0
	f.wg.Done()
	if !hooks {
		return
	}
	f.mu.Lock()
	ch, cb, more := f.done, f.cb, f.more
	f.cb, f.more = nil, nil
	f.mu.Unlock()
	if ch != nil && ch != closedChan {
		close(ch)
	}
	if cb != nil {
		cb(v, err)
	}
	if more != nil {
		for _, fn := range *more {
			fn(v, err)
		}
	}
}

// hook reports whether f is pending, and if so has the completion take mu; mu is held.
func (f *Future[T]) hook() bool { return f.state.Or(stHooks)&stDone == 0 }

// Done returns a channel that is closed when the future completes. The channel is made
// by the first call while the future is pending; a future that never had Done called
// has none to close.
func (f *Future[T]) Done() <-chan struct{} {
	if f == nil {
		return closedChan
	}
	f.mu.Lock()
	ch := f.done
	if ch == nil {
		if f.hook() {
			ch = make(chan struct{})
		} else {
			ch = closedChan
		}
		f.done = ch
	}
	f.mu.Unlock()
	return ch
}

// Await blocks until the future completes or ctx ends. It returns the future's value and
// error, or the zero value and ctx.Err() if ctx ended first (the future is not canceled:
// call Cancel for that). A nil ctx, like one that never ends, waits for the future; it
// then parks on a sync.WaitGroup inside the future, so that in a testing/synctest bubble a
// future made outside the bubble must not be completed inside it.
func (f *Future[T]) Await(ctx context.Context) (T, error) {
	if f == nil {
		var zero T
		return zero, ErrNilFuture
	}
	if f.state.Load()&stDone == 0 {
		var ctxDone <-chan struct{}
		if ctx != nil && !neverEnds(ctx) {
			ctxDone = ctx.Done()
		}
		if ctxDone == nil {
			f.wg.Wait()
		} else {
			select {
			case <-f.Done():
			case <-ctxDone:
				if f.state.Load()&stDone == 0 {
					var zero T
					return zero, ctx.Err()
				}
			}
		}
	}
	return f.val, f.err
}

// Result returns the value and error without blocking; ok is false while the future is
// pending.
func (f *Future[T]) Result() (v T, ok bool, err error) {
	if f == nil {
		return v, true, ErrNilFuture
	}
	if f.state.Load()&stDone == 0 {
		return v, false, nil
	}
	return f.val, true, f.err
}

// Cancel completes a pending future with ErrCanceled and asks its work to stop. It returns
// true if the future was pending and its work had not started, so it never will (a plain
// promise from NewPromise counts as not started); false if the future was already
// complete, or its work had already started (it is asked to stop, and its result is
// discarded), or its completer had claimed it (Promise.Claim): Cancel then does nothing.
func (f *Future[T]) Cancel() bool {
	if f == nil || !f.claim() {
		return false
	}
	s := f.stop
	var zero T
	f.finish(zero, ErrCanceled)
	if s == nil {
		return true
	}
	return s.stopWork()
}

// OnComplete calls fn with the future's value and error once it completes: at once, on the
// caller's goroutine, if it already has; otherwise on the goroutine that completes it.
// fn must not block.
func (f *Future[T]) OnComplete(fn func(T, error)) {
	if f == nil {
		var zero T
		fn(zero, ErrNilFuture)
		return
	}
	if f.state.Load()&stDone == 0 {
		f.mu.Lock()
		if f.hook() {
			switch {
			case f.cb == nil:
				f.cb = fn
			case f.more == nil:
				f.more = &[]func(T, error){fn}
			default:
				*f.more = append(*f.more, fn)
			}
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
	}
	fn(f.val, f.err)
}
