package hedge

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type valueKey struct{}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// SPEC HG-2: an attempt's context has the caller's deadline and values, and is running
// until the hedge cancels it; then Done is closed (made before or after) and Err is
// context.Canceled. Cancel is idempotent, and a nil context's cancel does nothing.
func TestHG2_AttemptContextForwardsAndCancels(t *testing.T) {
	deadline := time.Unix(4000000000, 0)
	parent, stop := context.WithDeadline(context.WithValue(context.Background(), valueKey{}, "v"), deadline)
	defer stop()
	c := newAttemptCtx(parent)
	d, ok := c.Deadline()
	assert.True(t, ok)
	assert.Equal(t, deadline, d)
	assert.Equal(t, "v", c.Value(valueKey{}))
	assert.NoError(t, c.Err())
	done := c.Done()
	require.NotNil(t, done)
	assert.Equal(t, done, c.Done(), "one channel")
	assert.False(t, isClosed(done))

	c.cancel()
	assert.True(t, isClosed(done))
	assert.ErrorIs(t, c.Err(), context.Canceled)
	c.cancel()
	assert.ErrorIs(t, c.Err(), context.Canceled)
	assert.NoError(t, parent.Err(), "the caller's context is untouched")

	late := newAttemptCtx(context.Background())
	late.cancel()
	assert.True(t, isClosed(late.Done()), "Done made after the cancel is closed")

	var none *attemptCtx
	assert.NotPanics(t, none.cancel)
}

// SPEC HG-2, HG-9: an attempt's context keeps the context package's promise: its Err is
// nil while its Done is open, even once the caller's context has ended (the call's hook
// then cancels it); canceled, it reports the caller's error (context.DeadlineExceeded
// here) rather than context.Canceled, and so do the contexts derived from it.
func TestHG9_AttemptContextReportsTheCallersEnd(t *testing.T) {
	parent, stop := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer stop()
	c := newAttemptCtx(parent)
	assert.NoError(t, c.Err(), "nil while Done is open, as the context package requires")
	assert.False(t, isClosed(c.Done()), "closed by the hedge, not by the caller's context")
	child, cancelChild := context.WithCancel(c)
	defer cancelChild()
	assert.NoError(t, child.Err())
	c.cancel()
	assert.True(t, isClosed(c.Done()))
	assert.ErrorIs(t, c.Err(), context.DeadlineExceeded, "canceled with the caller's error")
	assert.ErrorIs(t, child.Err(), context.DeadlineExceeded)
}

// SPEC HG-2, HG-17: a context.WithCancel of an attempt's context (what async.Go makes)
// registers through the attempt's AfterFunc, is canceled with it on the goroutine that
// cancels it, and unregisters when it is canceled first; a context.AfterFunc on it runs
// once it is canceled.
func TestHG17_DerivedContextsRegisterWithTheAttempt(t *testing.T) {
	c := newAttemptCtx(context.Background())
	child, cancelChild := context.WithCancel(c)
	defer cancelChild()
	ran := make(chan struct{})
	context.AfterFunc(c, func() { close(ran) })
	c.mu.Lock()
	assert.Len(t, c.hooks, 2, "both registered on the attempt's context")
	c.mu.Unlock()

	early, cancelEarly := context.WithCancel(c)
	cancelEarly()
	c.mu.Lock()
	assert.Len(t, c.hooks, 2, "a derived context canceled first leaves nothing behind")
	c.mu.Unlock()
	assert.ErrorIs(t, early.Err(), context.Canceled)

	assert.NoError(t, child.Err())
	c.cancel()
	assert.ErrorIs(t, child.Err(), context.Canceled, "canceled before cancel returns")
	assert.True(t, isClosed(child.Done()))
	<-ran
	c.mu.Lock()
	assert.Nil(t, c.hooks, "nothing stays referenced")
	c.mu.Unlock()
}

// SPEC HG-2: a function registered once the attempt's context is canceled runs at once
// on a goroutine of its own, and its stop reports false; a stop reports true once only.
func TestHG2_AfterFuncOnACanceledAttemptContext(t *testing.T) {
	c := newAttemptCtx(context.Background())
	stop := c.AfterFunc(func() { t.Error("a stopped function must not run") })
	assert.True(t, stop())
	assert.False(t, stop())
	c.cancel()

	ran := make(chan struct{})
	stop = c.AfterFunc(func() { close(ran) })
	<-ran
	assert.False(t, stop())
	child, cancelChild := context.WithCancel(c)
	defer cancelChild()
	assert.ErrorIs(t, child.Err(), context.Canceled)
}

// SPEC HG-2: Done, Err, AfterFunc, its stop and cancel are safe for concurrent use (run
// with -race): every function registered before or after the cancel runs.
func TestHG2_AttemptContextConcurrentUse(t *testing.T) {
	for range 100 {
		c := newAttemptCtx(context.Background())
		var wg, ran sync.WaitGroup
		ran.Add(4)
		for range 4 {
			wg.Go(func() {
				stop := c.AfterFunc(ran.Done)
				_ = c.Err()
				<-c.Done()
				assert.False(t, stop(), "the cancel has run it, or will")
			})
		}
		wg.Go(func() {
			_ = c.Done()
			c.cancel()
		})
		wg.Wait()
		ran.Wait()
	}
}

// SPEC HG-2: an attempt's context never reports an error while its Done channel is open.
// cancel stores the error, then closes Done, under the context's lock; here a reader
// comes in between (the state is set as cancel leaves it at that point): its Err must
// not return before Done is closed. The reader is given 50ms to return early, which it
// does at once when Err reads the stored error alone.
func TestHG2_AttemptContextErrWaitsForDone(t *testing.T) {
	for _, doneMade := range []bool{true, false} {
		c := newAttemptCtx(context.Background())
		var done chan struct{}
		if doneMade {
			c.Done()
			done = c.done.Load().(chan struct{})
		}
		c.mu.Lock()
		c.ended = true
		c.err.Store(&errCanceled) // what cancel does before it closes Done
		type result struct {
			err  error
			open bool
		}
		got := make(chan result, 1)
		go func() {
			err := c.Err()
			got <- result{err, !isClosed(c.Done())}
		}()
		select {
		case r := <-got:
			t.Fatalf("Err returned %v while Done was open (made before: %v)", r.err, doneMade)
		case <-time.After(50 * time.Millisecond):
		}
		if doneMade {
			close(done)
		} else {
			c.done.Store(closedChan)
		}
		c.mu.Unlock()
		r := <-got
		require.ErrorIs(t, r.err, context.Canceled)
		require.False(t, r.open)
	}
}

// SPEC HG-2: the same under a real race (run with -race): a goroutine reading the
// attempt's context while the hedge cancels it never sees an error with Done open.
func TestHG2_AttemptContextErrNeverBeforeDone(t *testing.T) {
	for range 300 {
		c := newAttemptCtx(context.Background())
		early := ctxtest.ErrBeforeDone(c, c.cancel)
		require.False(t, early, "Err() != nil while Done() was still open")
	}
}
