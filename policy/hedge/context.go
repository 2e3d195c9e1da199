package hedge

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/internal/future"
)

// An attemptCtx is the context of one attempt: the caller's context's deadline and values,
// done when the hedge cancels it. It registers nothing on the caller's context: the
// caller's context ending reaches it through the call's hook on that context (or, on the
// fast path, through the cancel that follows attempt 1's result at once). As the context
// package requires, its Err is nil until its Done channel is closed. Contexts derived from it (context.WithCancel,
// context.AfterFunc) register through its AfterFunc method, with no goroutine and no map,
// and are canceled with it, on the goroutine that cancels it. The first async.Go call made
// with it gets child, one allocation (future.Parent), instead of context.WithCancel's
// three and the registration on this context. The child is made only then, so that an
// attempt's context stays one size class for the calls that start no goroutine.
type attemptCtx struct {
	ctxCore
	child atomic.Pointer[goChild] // fn's context for the first async.Go call with this one
}

// A goChild is the context an attemptCtx gives async.Go for its fn: canceled with the
// attempt's context (with its error), or by StopWork (with context.Canceled).
type goChild struct{ ctxCore }

// StopWork cancels the context: async.Go calls it once fn has returned or when its future
// is canceled. The work has started: it reports false.
func (c *goChild) StopWork() bool {
	c.cancel()
	return false
}

var _ future.Parent = (*attemptCtx)(nil)

// A ctxCore is a context with a parent whose deadline and values it has, canceled by
// cancel, with hooks registered by AfterFunc.
type ctxCore struct {
	parent context.Context
	err    atomic.Pointer[error] // nil while running
	done   atomic.Value          // chan struct{}, made by Done or by cancel

	mu     sync.Mutex
	ended  bool
	nextID uint64
	hooks  []afterHook  // registered by AfterFunc; nil once ended
	first  [1]afterHook // hooks' first backing array
}

// An afterHook is a function registered by AfterFunc, and its id for stop.
type afterHook struct {
	id uint64
	f  func()
}

var (
	errCanceled = context.Canceled
	closedChan  = func() chan struct{} {
		c := make(chan struct{})
		close(c)
		return c
	}()
)

func newAttemptCtx(parent context.Context) *attemptCtx {
	c := &attemptCtx{}
	c.init(parent)
	return c
}

// init sets the parent of c, before c is shared.
func (c *ctxCore) init(parent context.Context) {
	c.parent = parent
	c.hooks = c.first[:0]
}

// GoChild gives async.Go, once, the context of its fn: child, canceled with c.
func (c *attemptCtx) GoChild() future.Child {
	if c.child.Load() != nil {
		return nil
	}
	child := &goChild{}
	child.init(c)
	if !c.child.CompareAndSwap(nil, child) {
		return nil
	}
	if c.err.Load() != nil { // canceled: cancel may have looked for the child before it was set
		child.cancel()
	}
	return child
}

// cancel cancels the context (see ctxCore.cancel) and the context it gave async.Go. It
// does nothing on a nil c.
func (c *attemptCtx) cancel() {
	if c == nil {
		return
	}
	c.ctxCore.cancel()
	if child := c.child.Load(); child != nil {
		child.cancel()
	}
}

// Deadline returns the caller's context's deadline.
func (c *ctxCore) Deadline() (time.Time, bool) { return c.parent.Deadline() }

// Value returns the caller's context's value for key.
func (c *ctxCore) Value(key any) any { return c.parent.Value(key) }

// Err returns the error the context was canceled with (the caller's context's error if
// it had ended, else context.Canceled); nil until then. cancel stores the error before
// it closes Done, so an Err that finds the error waits for Done, as the context package's
// own contexts do: a goroutine never sees an error while Done is open. The wait is at most
// the rest of a cancel already under way, which holds the lock and does not block.
func (c *ctxCore) Err() error {
	if p := c.err.Load(); p != nil {
		<-c.Done()
		return *p
	}
	return nil
}

// Done returns a channel closed when the context is canceled, made at the first call.
func (c *ctxCore) Done() <-chan struct{} {
	if d := c.done.Load(); d != nil {
		return d.(chan struct{})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.done.Load()
	if d == nil {
		d = make(chan struct{})
		c.done.Store(d)
	}
	return d.(chan struct{})
}

// AfterFunc arranges for f to run once the context is canceled, on the goroutine that
// cancels it, or at once on a goroutine of its own if it already is. stop removes f and
// reports whether it did so before f ran. The context package uses it (its afterFuncer
// interface) for the contexts derived from this one.
func (c *ctxCore) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		// Its own goroutine: the context package may hold a lock that f takes.
		go f()
		return func() bool { return false }
	}
	c.nextID++
	id := c.nextID
	c.hooks = append(c.hooks, afterHook{id: id, f: f})
	c.mu.Unlock()
	return func() bool { return c.stop(id) }
}

// stop removes the hook id, reporting whether it was still registered.
func (c *ctxCore) stop(id uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, h := range c.hooks {
		if h.id == id {
			last := len(c.hooks) - 1
			copy(c.hooks[i:], c.hooks[i+1:])
			c.hooks[last] = afterHook{}
			c.hooks = c.hooks[:last]
			return true
		}
	}
	return false
}

// cancel cancels the context, with its parent's error if the parent has ended, else with
// context.Canceled, and runs the registered hooks. It is idempotent.
func (c *ctxCore) cancel() {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	c.ended = true
	if perr := c.parent.Err(); perr != nil && perr != errCanceled {
		c.err.Store(errPtr(perr))
	} else { // context.Canceled needs no copy of its own
		c.err.Store(&errCanceled)
	}
	if d := c.done.Load(); d != nil {
		close(d.(chan struct{}))
	} else {
		c.done.Store(closedChan)
	}
	hooks := c.hooks
	c.hooks = nil
	c.mu.Unlock()
	for i := range hooks {
		hooks[i].f()
		hooks[i] = afterHook{}
	}
}

// errPtr returns a pointer to a copy of err.
func errPtr(err error) *error { return &err }
