// Package future is the implementation of async.Future, shared by package async, which
// shows it to users, and by the policies' machinery (internal/delay, internal/promise),
// which complete futures in ways users do not: with a stopper of their own, or after
// claiming them. async.Future is defined on Future (type Future[T] future.Future[T]), so a
// *Future[T] and an *async.Future[T] convert into each other.
package future

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// ErrCanceled is async.ErrCanceled.
var ErrCanceled = errors.New("async: future canceled")

// ErrNilFuture is async.ErrNilFuture.
var ErrNilFuture = errors.New("async: nil future")

// ErrPanicked is async.ErrPanicked.
var ErrPanicked = errors.New("async: the started work panicked")

// Future is the implementation of async.Future, whose documentation tells what each of
// its methods does. The methods async.Future does not have are for the policies'
// machinery: Init, Claim, Claimed, Finish, Complete, ClaimOwned and CompleteOwned.
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
	cb    func(T, error) // the first OnComplete callback
	ext   *extra[T]      // what few futures need, made when first needed; under mu
	stop  Stopper        // stops the work on Cancel; nil for a plain promise
}

// extra holds what few futures need, out of line so that every future stays small: the
// OnComplete callbacks after the first, in order, and the AfterFunc functions of Go's
// context not run nor stopped.
type extra[T any] struct {
	more   []func(T, error)
	afters map[*afterFunc]struct{}
}

// extra returns f's extra, made if f has none. f.mu must be held.
func (f *Future[T]) extra() *extra[T] {
	if f.ext == nil {
		f.ext = new(extra[T])
	}
	return f.ext
}

// The bits of Future.state.
const (
	stClaimed uint32 = 1 << iota // a completion has begun: every later one is ignored
	stDone                       // val and err are set
	stHooks                      // a callback or the done channel waits: the completion takes mu
	stFired                      // a goCall's AfterFunc functions have run; set under mu
	stOwned                      // ClaimOwned set stClaimed: the next CompleteOwned completes
)

// Stopper stops the work of a future that Cancel completed, and reports whether it had
// not started yet.
type Stopper interface{ StopWork() bool }

// cancelHook is the onCancel function of New as a stopper (a func value
// fits in an interface without allocating).
type cancelHook func() bool

func (h cancelHook) StopWork() bool { return h() }

// Init makes f pending, with s (may be nil) to stop its work on Cancel. It is called
// once, before f is shared.
func (f *Future[T]) Init(s Stopper) {
	f.stop = s
	f.wg.Add(1)
}

// New returns a pending future whose Cancel calls onCancel (nil: none) once, after
// completing it with ErrCanceled; onCancel stops the work and reports whether it had not
// started yet. It allocates the future only.
func New[T any](onCancel func() (notStarted bool)) *Future[T] {
	f := &Future[T]{}
	var s Stopper
	if onCancel != nil {
		s = cancelHook(onCancel)
	}
	f.Init(s)
	return f
}

// Completed is async.Completed.
func Completed[T any](v T) *Future[T] {
	f := &Future[T]{val: v}
	f.state.Store(stClaimed | stDone)
	return f
}

// Failed is async.Failed.
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

// Go is async.Go; its documentation tells what a call costs.
func Go[T any](ctx context.Context, fn func(context.Context) (T, error)) *Future[T] {
	g := new(goCall[T])
	if neverEnds(ctx) {
		g.Init(started{})
		go g.run(fn)
		return &g.Future
	}
	if p, ok := ctx.(Parent); ok {
		if child := p.GoChild(); child != nil {
			g.Init(child)
			go g.runChild(fn, child)
			return &g.Future
		}
	}
	fctx, cancel := context.WithCancel(ctx)
	g.Init(cancelOnStop(cancel))
	go g.runWith(fn, fctx, cancel)
	return &g.Future
}

// A Parent is a context that provides, without allocating, the context of fn for one call
// of Go made with it (a policy's attempt context does): a Child that behaves as
// context.WithCancel(parent) would. GoChild returns nil when it has none to give (it
// gives one only once); Go then derives fn's context with context.WithCancel.
type Parent interface {
	context.Context
	GoChild() Child
}

// A Child is the context of fn that a Parent gives Go. It is canceled with its parent,
// with the parent's error, and by its StopWork, with context.Canceled: Go calls StopWork
// when the future is canceled and once fn has returned, and StopWork reports false (the
// work has started).
type Child interface {
	context.Context
	Stopper
}

// started is the stopper of the future of Go whose goroutine is fn's context: the work
// has started, and completing the future cancels that context.
type started struct{}

func (started) StopWork() bool { return false }

// cancelOnStop is the stopper of the future of Go whose fn has a context derived with
// context.WithCancel: its cancel function (a func value fits in an interface without
// allocating).
type cancelOnStop context.CancelFunc

func (c cancelOnStop) StopWork() bool {
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
// It is the future alone, 96 bytes for a T of one word, a size class of the allocator: fn
// and its context are arguments of the goroutine, the cancel function of a derived
// context is the future's stopper, the AfterFunc functions are in the future's extra,
// and "the afters have run" is a bit of the future's state.
type goCall[T any] struct {
	Future[T]
}

// afterFunc is one function registered with goCall.AfterFunc.
type afterFunc struct{ fn func() }

// run is the goroutine of Go when the goCall is fn's context.
func (g *goCall[T]) run(fn func(context.Context) (T, error)) {
	v, err := fn(g)
	if g.state.Or(stClaimed)&stClaimed == 0 {
		g.Finish(v, err)
	}
}

// runWith is the goroutine of Go when fn's context is ctx, whose cancel function is
// cancel.
func (g *goCall[T]) runWith(fn func(context.Context) (T, error), ctx context.Context, cancel context.CancelFunc) {
	defer cancel()
	v, err := fn(ctx)
	g.Complete(v, err)
}

// runChild is the goroutine of Go when fn's context is child, which it cancels once
// fn has returned and the future is complete. It defers nothing and calls Finish itself,
// so that the callbacks that Finish runs (a policy ending its call) have the most of the
// goroutine's first stack.
func (g *goCall[T]) runChild(fn func(context.Context) (T, error), child Child) {
	v, err := fn(child)
	if g.Claim() {
		g.Finish(v, err)
	}
	child.StopWork()
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
	case g.ext == nil || g.ext.afters == nil:
		g.extra().afters = map[*afterFunc]struct{}{a: {}}
		g.mu.Unlock()
		g.OnComplete(g.runAfters)
	default:
		g.ext.afters[a] = struct{}{}
		g.mu.Unlock()
	}
	return func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.ext == nil {
			return false
		}
		if _, ok := g.ext.afters[a]; !ok {
			return false
		}
		delete(g.ext.afters, a)
		return true
	}
}

// runAfters starts the AfterFunc functions not stopped, once the future completes.
func (g *goCall[T]) runAfters(T, error) {
	g.mu.Lock()
	var afters map[*afterFunc]struct{}
	if g.ext != nil {
		afters, g.ext.afters = g.ext.afters, nil
	}
	g.state.Or(stFired)
	g.mu.Unlock()
	for a := range afters {
		go a.fn()
	}
}

func (g *goCall[T]) String() string { return "async.Go context" }

// Complete completes f with v and err unless a completion has begun.
func (f *Future[T]) Complete(v T, err error) {
	if f.Claim() {
		f.Finish(v, err)
	}
}

// Claim begins the completion of f, and reports whether this goroutine has it (f was
// pending and no completion had begun): it then calls Finish; Cancel and every other
// completion do nothing.
func (f *Future[T]) Claim() bool { return f.state.Or(stClaimed)&stClaimed == 0 }

// Claimed reports whether a completion of f has begun: Cancel, a completion, or a claim.
func (f *Future[T]) Claimed() bool { return f.state.Load()&stClaimed != 0 }

// Finish completes the future, whose completion this goroutine has claimed.
func (f *Future[T]) Finish(v T, err error) {
	f.val, f.err = v, err
	f.stop = nil
	hooks := f.state.Or(stDone)&stHooks != 0
	f.wg.Done()
	if !hooks {
		return
	}
	f.mu.Lock()
	ch, cb := f.done, f.cb
	var more []func(T, error)
	if f.ext != nil {
		more, f.ext.more = f.ext.more, nil
	}
	f.cb = nil
	f.mu.Unlock()
	if ch != nil && ch != closedChan {
		close(ch)
	}
	if cb != nil {
		cb(v, err)
	}
	for _, fn := range more {
		fn(v, err)
	}
}

// ClaimOwned begins the completion of f for a completer that has work to do before
// completing it, and reports whether it won it: true if f was pending and no completion
// had begun. After it has won, Cancel reports false and does nothing, and the next
// CompleteOwned completes f. A nil f reports false.
func (f *Future[T]) ClaimOwned() bool {
	if f == nil || !f.Claim() {
		return false
	}
	f.state.Or(stOwned)
	return true
}

// CompleteOwned completes f with v and err, and reports whether it did: it does when no
// completion has begun, and once ClaimOwned has won f (the first CompleteOwned after it);
// it does nothing once f is complete, or once Cancel, another completion or a claim has
// begun completing it without this CompleteOwned. A nil f reports false.
func (f *Future[T]) CompleteOwned(v T, err error) bool {
	if f == nil {
		return false
	}
	if !f.Claim() && f.state.And(^stOwned)&stOwned == 0 {
		return false
	}
	f.Finish(v, err)
	return true
}

// hook reports whether f is pending, and if so has the completion take mu; mu is held.
func (f *Future[T]) hook() bool { return f.state.Or(stHooks)&stDone == 0 }

// Done is async.Future.Done.
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

// Await is async.Future.Await.
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

// Result is async.Future.Result.
func (f *Future[T]) Result() (v T, ok bool, err error) {
	if f == nil {
		return v, true, ErrNilFuture
	}
	if f.state.Load()&stDone == 0 {
		return v, false, nil
	}
	return f.val, true, f.err
}

// Cancel is async.Future.Cancel. A future whose completer won ClaimOwned is not
// canceled: Cancel then does nothing and returns false.
func (f *Future[T]) Cancel() bool {
	if f == nil || !f.Claim() {
		return false
	}
	s := f.stop
	var zero T
	f.Finish(zero, ErrCanceled)
	if s == nil {
		return true
	}
	return s.StopWork()
}

// OnComplete is async.Future.OnComplete.
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
			default:
				e := f.extra()
				e.more = append(e.more, fn)
			}
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
	}
	fn(f.val, f.err)
}
