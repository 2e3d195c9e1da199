package delay_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/internal/delay"
	"github.com/resilience4go/resilience4go/internal/futuretest"
)

// call is a Delayed call whose starts and stops the test records. Start returns the
// future of next (a pending promise the test completes, by default).
type call struct {
	d    delay.Delayed[int]
	next func() *async.Future[int]

	mu       sync.Mutex
	starts   int
	stops    []error
	inner    []*async.Future[int]
	complete []func(int, error)
	endV     int // what Stop(nil) returns
	endErr   error
}

func newCall() *call { return &call{} }

func (c *call) Start() *async.Future[int] {
	var f *async.Future[int]
	if c.next != nil {
		f = c.next()
	} else {
		var complete func(int, error)
		f, complete = async.NewPromise[int]()
		c.mu.Lock()
		c.complete = append(c.complete, complete)
		c.mu.Unlock()
	}
	c.mu.Lock()
	c.starts++
	c.inner = append(c.inner, f)
	c.mu.Unlock()
	return f
}

func (c *call) Stop(cause error) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stops = append(c.stops, cause)
	if cause == nil {
		return c.endV, c.endErr
	}
	return -1, fmt.Errorf("stopped: %w", cause)
}

func (c *call) counts() (starts int, stops []error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.starts, append([]error(nil), c.stops...)
}

func (c *call) finish(i int, v int, err error) {
	c.mu.Lock()
	complete := c.complete[i]
	c.mu.Unlock()
	complete(v, err)
}

// retrying is a call with an Observer: each failed result waits 1s and starts again,
// until a success, which ends the call with End.
type retrying struct {
	call
	results []error
}

func (r *retrying) Observe(v int, err error) {
	r.mu.Lock()
	r.results = append(r.results, err)
	if err == nil {
		r.endV = v
	}
	r.mu.Unlock()
	if err != nil {
		r.d.StartAfter(time.Second)
		return
	}
	r.d.End()
}

// hookCtx is a context that counts the hooks registered on it: context.AfterFunc uses its
// AfterFunc method. end runs the hooks still registered, as a context's end does.
type hookCtx struct {
	context.Context
	done chan struct{}

	mu    sync.Mutex
	ended bool
	seq   int
	hooks map[int]func()
	total int
}

func newHookCtx() *hookCtx {
	return &hookCtx{Context: context.Background(), done: make(chan struct{}), hooks: map[int]func(){}}
}

func (c *hookCtx) Done() <-chan struct{} { return c.done }

func (c *hookCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return context.Canceled
	}
	return nil
}

func (c *hookCtx) AfterFunc(f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total++
	if c.ended {
		go f()
		return func() bool { return false }
	}
	c.seq++
	id := c.seq
	c.hooks[id] = f
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := c.hooks[id]
		delete(c.hooks, id)
		return ok
	}
}

// registered returns the hooks registered now, and ever.
func (c *hookCtx) registered() (now, ever int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.hooks), c.total
}

// end ends the context; with run false, its hooks are left to runHooks (a context whose
// Err already reports the end while its hooks have yet to run).
func (c *hookCtx) end(run bool) {
	c.mu.Lock()
	c.ended = true
	c.mu.Unlock()
	if run {
		c.runHooks()
	}
}

func (c *hookCtx) runHooks() {
	c.mu.Lock()
	hooks := c.hooks
	c.hooks = map[int]func(){}
	c.mu.Unlock()
	select {
	case <-c.done:
	default:
		close(c.done)
	}
	for _, f := range hooks {
		f()
	}
}

// SPEC AS-2: the work starts when the clock reaches the delay, on a clock timer; the
// started work's result completes the future.
func TestDelayed_AS2_StartsAfterTheDelay(t *testing.T) {
	clk := clock.NewManual()
	c := newCall()
	f := c.d.Init(clk, bg(), c, nil)
	c.d.StartAfter(100 * time.Millisecond)
	assert.Equal(t, 1, clk.PendingTasks())

	clk.Advance(99 * time.Millisecond)
	starts, _ := c.counts()
	assert.Zero(t, starts)
	clk.Advance(time.Millisecond)
	starts, stops := c.counts()
	assert.Equal(t, 1, starts)
	assert.Empty(t, stops)
	assert.Zero(t, clk.PendingTasks())
	futuretest.RequirePending(t, f)

	c.finish(0, 7, nil)
	v, err := futuretest.Done(t, f)
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	assert.False(t, f.Cancel())
}

// A nil context is context.Background() and a nil clock the system clock (fault: a nil
// context made the first wait panic).
func TestDelayed_NilContextAndClock(t *testing.T) {
	c := newCall()
	c.next = func() *async.Future[int] { return async.Completed(7) }
	var ctx context.Context
	f := c.d.Init(nil, ctx, c, nil)
	require.NotPanics(t, func() { c.d.StartAfter(0) })
	// The system clock's timer starts the work; 10s bounds a failure only.
	wait, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := f.Await(wait)
	require.NoError(t, err)
	assert.Equal(t, 7, v)
}

// SPEC AS-3: cancelling during the wait stops the timer and the work never starts;
// Cancel reports true, and Stop learns why.
func TestDelayed_AS3_CancelWhileWaiting(t *testing.T) {
	clk := clock.NewManual()
	c := newCall()
	f := c.d.Init(clk, bg(), c, nil)
	c.d.StartAfter(time.Second)

	assert.True(t, f.Cancel())
	_, err := futuretest.Done(t, f)
	require.ErrorIs(t, err, async.ErrCanceled)
	assert.Zero(t, clk.PendingTasks(), "the timer is stopped")
	clk.Advance(time.Hour)
	starts, stops := c.counts()
	assert.Zero(t, starts)
	assert.Equal(t, []error{async.ErrCanceled}, stops)
	assert.False(t, c.d.Start(), "the wait is over")
	assert.False(t, c.d.End())
}

// SPEC AS-3: once the work has started, Cancel cancels its future and reports false.
func TestDelayed_AS3_CancelAfterStart(t *testing.T) {
	clk := clock.NewManual()
	var innerCanceled atomic.Bool
	c := newCall()
	c.next = func() *async.Future[int] {
		f, _ := async.NewCancelablePromise[int](func() bool { innerCanceled.Store(true); return false })
		return f
	}
	f := c.d.Init(clk, bg(), c, nil)
	c.d.StartAfter(time.Second)
	clk.Advance(time.Second)

	assert.False(t, f.Cancel())
	assert.True(t, innerCanceled.Load())
	_, err := futuretest.Done(t, f)
	require.ErrorIs(t, err, async.ErrCanceled)
	_, stops := c.counts()
	assert.Empty(t, stops, "a started call is not stopped")
}

// SPEC AS-3: a Cancel that comes while Start runs reaches the work Start returns.
func TestDelayed_AS3_CancelWhileStartRuns(t *testing.T) {
	clk := clock.NewManual()
	var innerCanceled atomic.Bool
	var f *async.Future[int]
	c := newCall()
	c.next = func() *async.Future[int] {
		assert.False(t, f.Cancel(), "the work is starting")
		inner, _ := async.NewCancelablePromise[int](func() bool { innerCanceled.Store(true); return false })
		return inner
	}
	f = c.d.Init(clk, bg(), c, nil)
	c.d.StartAfter(time.Second)
	clk.Advance(time.Second)
	assert.True(t, innerCanceled.Load())
	_, err := futuretest.Done(t, f)
	require.ErrorIs(t, err, async.ErrCanceled)
}

// SPEC AS-4: the context ending during the wait stops the timer and fails the future with
// Stop's result; the work never starts.
func TestDelayed_AS4_ContextEndsTheWait(t *testing.T) {
	clk := clock.NewManual()
	ctx, cancel := context.WithCancel(bg())
	c := newCall()
	f := c.d.Init(clk, ctx, c, nil)
	c.d.StartAfter(time.Second)
	cancel()

	v, err := futuretest.Await(t, f)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, -1, v)
	assert.Zero(t, clk.PendingTasks(), "the timer is stopped")
	clk.Advance(time.Hour)
	starts, stops := c.counts()
	assert.Zero(t, starts)
	assert.Equal(t, []error{context.Canceled}, stops)
	assert.False(t, f.Cancel())
}

// A context already ended when the wait would begin ends the call at once, on the
// caller's goroutine, with no timer and no hook.
func TestDelayed_ContextAlreadyEnded(t *testing.T) {
	clk := clock.NewManual()
	ctx := newHookCtx()
	ctx.end(true)
	c := newCall()
	f := c.d.Init(clk, ctx, c, nil)
	c.d.StartAfter(time.Second)

	_, err := futuretest.Done(t, f)
	require.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, clk.PendingTasks())
	_, ever := ctx.registered()
	assert.Zero(t, ever)
}

// SPEC AS-4: a context that has ended, whose hook has yet to run, keeps the work from
// starting, both on the timer and on Start.
func TestDelayed_AS4_ContextEndedBeforeItsHookRuns(t *testing.T) {
	clk := clock.NewManual()
	for _, startWithin := range []bool{false, true} {
		ctx := newHookCtx()
		c := newCall()
		f := c.d.Init(clk, ctx, c, nil)
		if startWithin {
			c.d.StartWithin(time.Second)
		} else {
			c.d.StartAfter(time.Second)
		}
		ctx.end(false)
		if startWithin {
			assert.False(t, c.d.Start())
		} else {
			clk.Advance(time.Second)
		}
		_, err := futuretest.Done(t, f)
		require.ErrorIs(t, err, context.Canceled)
		starts, stops := c.counts()
		assert.Zero(t, starts)
		assert.Equal(t, []error{context.Canceled}, stops)
		now, _ := ctx.registered()
		assert.Zero(t, now, "the hook is removed")
		ctx.runHooks()
		assert.Zero(t, clk.PendingTasks())
	}
}

// SPEC AS-2: StartWithin waits for Start, which starts the work on the caller's goroutine
// and stops the timer; a second Start does nothing.
func TestDelayed_AS2_StartWithinStartedByTheOwner(t *testing.T) {
	clk := clock.NewManual()
	c := newCall()
	f := c.d.Init(clk, bg(), c, nil)
	c.d.StartWithin(time.Second)
	assert.Equal(t, 1, clk.PendingTasks())

	assert.True(t, c.d.Start())
	starts, _ := c.counts()
	assert.Equal(t, 1, starts)
	assert.Zero(t, clk.PendingTasks(), "the timer is stopped")
	assert.False(t, c.d.Start())
	assert.False(t, c.d.End(), "the future is the work's")
	c.finish(0, 3, nil)
	v, err := futuretest.Done(t, f)
	require.NoError(t, err)
	assert.Equal(t, 3, v)
}

// A StartWithin wait that runs out ends the call with ErrExpired; Start then reports
// false.
func TestDelayed_StartWithinExpires(t *testing.T) {
	clk := clock.NewManual()
	c := newCall()
	f := c.d.Init(clk, bg(), c, nil)
	c.d.StartWithin(time.Second)
	clk.Advance(time.Second)

	_, err := futuretest.Done(t, f)
	require.ErrorIs(t, err, delay.ErrExpired)
	assert.False(t, c.d.Start())
	starts, stops := c.counts()
	assert.Zero(t, starts)
	assert.Equal(t, []error{delay.ErrExpired}, stops)
}

// With an Observer, results go to it; the call waits again and ends with End, whose
// result is Stop(nil)'s. The hook on the context is registered once, and removed at the
// end.
func TestDelayed_ObserverWaitsAgainAndEnds(t *testing.T) {
	clk := clock.NewManual()
	ctx := newHookCtx()
	r := &retrying{}
	first, completeFirst := async.NewPromise[int]()
	f := r.d.Init(clk, ctx, r, r)
	r.d.Started(first)
	_, before := ctx.registered()
	assert.Zero(t, before, "no hook before the first wait")

	completeFirst(0, errBoom)
	futuretest.RequirePending(t, f)
	assert.Equal(t, 1, clk.PendingTasks())
	clk.Advance(time.Second)
	r.finish(0, 0, errBoom)
	clk.Advance(time.Second)
	now, ever := ctx.registered()
	assert.Equal(t, 1, now)
	assert.Equal(t, 1, ever, "one hook for every wait")

	r.finish(1, 42, nil)
	v, err := futuretest.Done(t, f)
	require.NoError(t, err)
	assert.Equal(t, 42, v)
	starts, stops := r.counts()
	assert.Equal(t, 2, starts)
	assert.Equal(t, []error{nil}, stops)
	now, _ = ctx.registered()
	assert.Zero(t, now, "the hook is removed when the call ends")
	assert.Equal(t, []error{errBoom, errBoom, nil}, r.results)
}

// With an Observer, the context ending while work runs is left to the work; the next
// wait ends at once.
func TestDelayed_ObserverContextEndsWhileWorkRuns(t *testing.T) {
	clk := clock.NewManual()
	ctx := newHookCtx()
	r := &retrying{}
	f := r.d.Init(clk, ctx, r, r)
	r.d.StartAfter(time.Second)
	clk.Advance(time.Second)
	ctx.end(true) // the hook runs while the work is in flight: nothing happens
	futuretest.RequirePending(t, f)

	r.finish(0, 0, errBoom) // the Observer waits again: the context has ended
	_, err := futuretest.Done(t, f)
	require.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, clk.PendingTasks())
	starts, stops := r.counts()
	assert.Equal(t, 1, starts)
	assert.Equal(t, []error{context.Canceled}, stops)
}

// SPEC AS-3: with an Observer, Cancel after a start reports false, cancels the work in
// flight, and its result is not observed.
func TestDelayed_AS3_ObserverCancelInFlight(t *testing.T) {
	clk := clock.NewManual()
	r := &retrying{}
	first, _ := async.NewPromise[int]()
	f := r.d.Init(clk, bg(), r, r)
	r.d.Started(first)

	assert.False(t, f.Cancel())
	_, err := futuretest.Done(t, first)
	require.ErrorIs(t, err, async.ErrCanceled, "the work in flight is canceled")
	assert.Empty(t, r.results, "its result is not observed")
	assert.Zero(t, clk.PendingTasks())
}

// stubbornClock's timers cannot be stopped: they stand for a timer that fires while Stop
// is called, on a real clock.
type stubbornClock struct{ *clock.Manual }

type stubbornTimer struct{}

func (stubbornTimer) Stop() bool { return false }

func (c stubbornClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	c.Manual.AfterFunc(d, f)
	return stubbornTimer{}
}

// The timer of a wait that Start ended, firing late, does not end the next wait.
func TestDelayed_StaleTimerDoesNotEndTheNextWait(t *testing.T) {
	clk := stubbornClock{clock.NewManual()}
	r := &retrying{}
	f := r.d.Init(clk, bg(), r, r)
	r.d.StartWithin(500 * time.Millisecond)
	require.True(t, r.d.Start())
	r.finish(0, 0, errBoom) // waits 1s

	clk.Advance(500 * time.Millisecond) // the first wait's timer fires anyway
	starts, stops := r.counts()
	assert.Equal(t, 1, starts)
	assert.Empty(t, stops, "the second wait goes on")
	clk.Advance(500 * time.Millisecond)
	starts, _ = r.counts()
	assert.Equal(t, 2, starts, "the second wait's own timer starts the work")
	r.finish(1, 1, nil)
	_, err := futuretest.Done(t, f)
	require.NoError(t, err)
}

// SPEC AS-2: a timer that fires as it is armed, before the hook on the context could be
// registered, still finds the hook to remove.
func TestDelayed_AS2_TimerFiringAtOnceLeavesNoHook(t *testing.T) {
	ctx := newHookCtx()
	c := newCall()
	c.next = func() *async.Future[int] { return async.Completed(5) }
	f := c.d.Init(ctxtest.EagerClock{Manual: clock.NewManual()}, ctx, c, nil)
	c.d.StartAfter(time.Second)

	v, err := futuretest.Await(t, f)
	require.NoError(t, err)
	assert.Equal(t, 5, v)
	now, ever := ctx.registered()
	assert.Zero(t, now, "no hook left on the context")
	assert.Equal(t, 1, ever)
}

// SPEC AS-2, AS-3: whichever way a call ends (its timer, Start, Cancel, the context, the
// wait running out, End), nothing stays registered on the context, also when the timer
// fires first; the hook of a call without an Observer goes as its work starts.
func TestDelayed_AS3_NoHookLeftOnTheContext(t *testing.T) {
	clk := clock.NewManual()
	ctx := newHookCtx()
	started := func() *call {
		c := newCall()
		c.d.Init(clk, ctx, c, nil)
		c.d.StartAfter(time.Millisecond)
		return c
	}
	byTimer := started()
	clk.Advance(time.Millisecond)
	now, _ := ctx.registered()
	assert.Zero(t, now, "removed as the work starts, before it completes")

	byStart := newCall()
	byStart.d.Init(clk, ctx, byStart, nil)
	byStart.d.StartWithin(time.Second)
	require.True(t, byStart.d.Start())
	expired := newCall()
	expired.d.Init(clk, ctx, expired, nil)
	expired.d.StartWithin(time.Second)
	clk.Advance(time.Second)
	canceled := newCall()
	f := canceled.d.Init(clk, ctx, canceled, nil)
	canceled.d.StartAfter(time.Second)
	assert.True(t, f.Cancel())
	ended := &retrying{}
	ended.d.Init(clk, ctx, ended, ended)
	ended.d.StartAfter(time.Second)
	require.True(t, ended.d.End())

	now, ever := ctx.registered()
	assert.Zero(t, now)
	assert.Equal(t, 5, ever)

	ending := newCall()
	f = ending.d.Init(clk, ctx, ending, nil)
	ending.d.StartAfter(time.Second)
	ctx.end(true)
	_, err := futuretest.Await(t, f) // the hook runs on its own goroutine
	require.ErrorIs(t, err, context.Canceled)
	_, stops := ending.counts()
	assert.Equal(t, []error{context.Canceled}, stops)
	now, _ = ctx.registered()
	assert.Zero(t, now)
	byTimer.finish(0, 1, nil)
	byStart.finish(0, 1, nil)
	assert.Zero(t, clk.PendingTasks())
}

// SPEC AS-2, AS-3: on the system clock, timers of 0 and 1µs fire while their call is being
// set up, and Cancel races with them: each call either starts or stops, exactly once,
// Cancel reports true exactly when it did not start, and nothing stays registered on the
// long-lived context the calls share (a registration would keep a goroutine).
func TestDelayed_AS2_SystemClockRaces(t *testing.T) {
	ctx := ctxtest.NewOwnDone()
	defer ctx.Cancel()
	done := async.Completed(1)
	before := runtime.NumGoroutine()

	const n = 20_000
	calls := make([]*call, n)
	futures := make([]*async.Future[int], n)
	canceled := make([]bool, n)
	var wg sync.WaitGroup
	for i := range calls {
		c := newCall()
		c.next = func() *async.Future[int] { return done }
		calls[i] = c
		futures[i] = c.d.Init(clock.System(), ctx, c, nil)
		c.d.StartAfter(time.Duration(i % 2))
		if i%3 == 0 {
			wg.Go(func() { canceled[i] = futures[i].Cancel() })
		}
	}
	wg.Wait()
	for i, f := range futures {
		_, err := futuretest.Await(t, f)
		starts, stops := calls[i].counts()
		require.Equal(t, 1, starts+len(stops), "call %d starts or stops once", i)
		if starts == 0 {
			require.ErrorIs(t, err, async.ErrCanceled)
			require.True(t, canceled[i])
		} else {
			require.False(t, canceled[i])
		}
	}
	assert.LessOrEqual(t, ctxtest.SettleGoroutines(before), before, "no hook left on the context")
}

// SPEC AS-2: waiting calls hold no goroutine, on a context that can end.
func TestDelayed_AS2_WaitingCallsHoldNoGoroutine(t *testing.T) {
	clk := clock.NewManual()
	ctx, cancel := context.WithCancel(bg())
	defer cancel()
	before := runtime.NumGoroutine()
	calls := make([]*call, 1000)
	for i := range calls {
		calls[i] = newCall()
		calls[i].d.Init(clk, ctx, calls[i], nil)
		calls[i].d.StartAfter(time.Second)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before)
	assert.Equal(t, 1000, clk.PendingTasks())
	clk.Advance(time.Second)
	for _, c := range calls {
		starts, _ := c.counts()
		require.Equal(t, 1, starts)
	}
}

// The cost of a wait: the future, the hooks bound to the Delayed, the clock's timer. The
// work's own future and the future's callback are the caller's.
func TestDelayed_Allocations(t *testing.T) {
	clk := clock.NewManual()
	inner := async.Completed(1)
	allocs := testing.AllocsPerRun(100, func() {
		c := &call{next: func() *async.Future[int] { return inner }}
		c.d.Init(clk, bg(), c, nil)
		c.d.StartAfter(time.Millisecond)
		clk.Advance(time.Millisecond)
	})
	// The test's own: call (which holds the Delayed and its future), next's closure, the
	// bookkeeping slice. The Delayed's: the timer's function, the timer, and the callback
	// that completes the future with the work's result.
	assert.LessOrEqual(t, allocs, 6.0)
}

// panicStarter is a Starter whose Start panics.
type panicStarter struct{ stops int }

func (*panicStarter) Start() *async.Future[int] { panic("boom") }

func (s *panicStarter) Stop(error) (int, error) { s.stops++; return 0, nil }

// SPEC AS-2: work that panics when a clock timer starts it fails the call's future with
// ErrPanicked, so that its awaiters are not left waiting for ever; the panic goes on up
// the goroutine that started it, Stop is not called and nothing is left on the clock or
// the context.
func TestDelayed_AS2_PanicInStartFailsTheFuture(t *testing.T) {
	clk := clock.NewManual()
	ctx := newHookCtx()
	s := &panicStarter{}
	var d delay.Delayed[int]
	f := d.Init(clk, ctx, s, nil)
	d.StartAfter(time.Second)
	assert.PanicsWithValue(t, "boom", func() { clk.Advance(time.Second) })
	_, err := futuretest.Done(t, f)
	require.ErrorIs(t, err, async.ErrPanicked)
	assert.Zero(t, s.stops)
	assert.Zero(t, clk.PendingTasks())
	now, _ := ctx.registered()
	assert.Zero(t, now, "the context hook is removed")
	assert.False(t, f.Cancel())

	// Started by its owner, the same.
	s2 := &panicStarter{}
	var d2 delay.Delayed[int]
	f2 := d2.Init(clk, bg(), s2, nil)
	d2.StartWithin(time.Second)
	assert.PanicsWithValue(t, "boom", func() { d2.Start() })
	_, err = futuretest.Done(t, f2)
	require.ErrorIs(t, err, async.ErrPanicked)
	assert.Zero(t, clk.PendingTasks(), "the MaxWait timer is stopped")
	fired := false
	clk.AfterFunc(time.Second, func() { fired = true })
	clk.Advance(time.Second)
	assert.True(t, fired, "the clock goes on after a timer panicked")
}

// A Delayed whose future Cancel has claimed, but whose cancel hook has not run yet, does
// not end another way: its wait's delay (StartWithin) does not call Stop(ErrExpired), and
// the call ends once, with Stop(ErrCanceled) (SPEC AS-7).
func TestDelayed_AS7_ExpiryRacingCancelStopsOnceCanceled(t *testing.T) {
	clk := clock.NewManual()
	c := newCall()
	f := c.d.Init(clk, bg(), c, nil)
	c.d.StartWithin(time.Second)
	f.OnComplete(func(int, error) { clk.Advance(time.Second) }) // in Cancel, before its hook
	assert.True(t, f.Cancel())
	starts, stops := c.counts()
	assert.Zero(t, starts)
	assert.Equal(t, []error{async.ErrCanceled}, stops)
	_, err := futuretest.Done(t, f)
	assert.ErrorIs(t, err, async.ErrCanceled)
	assert.Zero(t, clk.PendingTasks())
}

// A wait whose delay passes in that window starts nothing: Cancel reports true, as the
// work never starts (SPEC AS-7, AS-3).
func TestDelayed_AS7_StartRacingCancelStartsNothing(t *testing.T) {
	clk := clock.NewManual()
	c := newCall()
	f := c.d.Init(clk, bg(), c, nil)
	c.d.StartAfter(time.Second)
	f.OnComplete(func(int, error) { clk.Advance(time.Second) })
	assert.True(t, f.Cancel(), "the work never started")
	starts, stops := c.counts()
	assert.Zero(t, starts)
	assert.Equal(t, []error{async.ErrCanceled}, stops)

	// The owner's Start in that window starts nothing either.
	c2 := newCall()
	f2 := c2.d.Init(clk, bg(), c2, nil)
	c2.d.StartWithin(time.Minute)
	var started bool
	f2.OnComplete(func(int, error) { started = c2.d.Start() })
	assert.True(t, f2.Cancel())
	assert.False(t, started)
	starts, stops = c2.counts()
	assert.Zero(t, starts)
	assert.Equal(t, []error{async.ErrCanceled}, stops)
	assert.Zero(t, clk.PendingTasks())
}

// With an Observer, a result arriving in that window is not observed, and End in it does
// not end the call: Stop is called once, with ErrCanceled (SPEC AS-7).
func TestDelayed_AS7_ObservedResultRacingCancel(t *testing.T) {
	clk := clock.NewManual()
	r := &retrying{}
	f := r.d.Init(clk, bg(), r, r)
	r.d.StartAfter(0)
	clk.Advance(0)
	starts, _ := r.counts()
	require.Equal(t, 1, starts)
	f.OnComplete(func(int, error) { r.finish(0, 5, nil) })
	assert.False(t, f.Cancel(), "the work had started")
	r.mu.Lock()
	results := r.results
	r.mu.Unlock()
	assert.Empty(t, results, "a result after Cancel began is not observed")
	_, stops := r.counts()
	assert.Equal(t, []error{async.ErrCanceled}, stops)

	// End from the Observer's goroutine, in that window, does not end it either.
	r2 := &retrying{}
	f2 := r2.d.Init(clk, bg(), r2, r2)
	var ended bool
	f2.OnComplete(func(int, error) { ended = r2.d.End() })
	assert.True(t, f2.Cancel())
	assert.False(t, ended)
	_, stops = r2.counts()
	assert.Equal(t, []error{async.ErrCanceled}, stops)
}

var errBoom = errors.New("boom")

func bg() context.Context { return context.Background() }
