package hedge

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// An attemptCtx is the context of one attempt: the caller's context's deadline and values,
// done when the hedge cancels it. It registers nothing on the caller's context: the
// caller's context ending reaches it through the call's hook on that context (or, on the
// fast path, through the cancel that follows attempt 1's result at once). As the context
// package requires, its Err is nil until its Done channel is closed. Contexts derived from it (context.WithCancel,
// context.AfterFunc) register through its AfterFunc method, with no goroutine and no map,
// and are canceled with it, on the goroutine that cancels it.
type attemptCtx struct {
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
	c := &attemptCtx{parent: parent}
	c.hooks = c.first[:0]
	return c
}

// Deadline returns the caller's context's deadline.
func (c *attemptCtx) Deadline() (time.Time, bool) { return c.parent.Deadline() }

// Value returns the caller's context's value for key.
func (c *attemptCtx) Value(key any) any { return c.parent.Value(key) }

// Err returns the error the context was canceled with (the caller's context's error if
// it had ended, else context.Canceled); nil until then. cancel stores the error before
// it closes Done, so an Err that finds the error waits for Done, as the context package's
// own contexts do: a goroutine never sees an error while Done is open. The wait is at most
// the rest of a cancel already under way, which holds the lock and does not block.
func (c *attemptCtx) Err() error {
	if p := c.err.Load(); p != nil {
		<-c.Done()
		return *p
	}
	return nil
}

// Done returns a channel closed when the context is canceled, made at the first call.
func (c *attemptCtx) Done() <-chan struct{} {
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
func (c *attemptCtx) AfterFunc(f func()) (stop func() bool) {
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
func (c *attemptCtx) stop(id uint64) bool {
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

// cancel cancels the context, with the caller's context's error if it has ended, else
// with context.Canceled, and runs the registered hooks. It is idempotent, and does
// nothing on a nil c.
func (c *attemptCtx) cancel() {
	if c == nil {
		return
	}
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	c.ended = true
	if perr := c.parent.Err(); perr != nil {
		c.err.Store(errPtr(perr))
	} else {
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
