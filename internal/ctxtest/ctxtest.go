// Package ctxtest helps tests find context registrations left behind: a context whose
// Done channel is its own, so that context.AfterFunc watches it with one goroutine per
// registration, a wait for the number of goroutines to settle, and a clock whose timers
// fire as they are armed. It also gives the contexts that are over before a call
// arrives, each with the error the call must return.
package ctxtest

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
)

// Over is a context that is over before a call arrives, and the error the call must
// return: what decorate.ContextErr gives for it.
type Over struct {
	Name string          // the case's name, for t.Run
	Ctx  context.Context // canceled, past its deadline, or nil
	Want error           // context.Canceled, context.DeadlineExceeded or policy.ErrNilContext
}

// Canceled returns a context canceled before any call, with context.Canceled.
func Canceled() Over {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return Over{Name: "canceled", Ctx: ctx, Want: context.Canceled}
}

// Expired returns a context whose deadline has passed, with context.DeadlineExceeded.
// It is done from the start, so that it needs no cleanup.
func Expired() Over {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	cancel() // the deadline ended it first: its error stays context.DeadlineExceeded
	return Over{Name: "deadline passed", Ctx: ctx, Want: context.DeadlineExceeded}
}

// Nil returns a nil context, with policy.ErrNilContext.
func Nil() Over {
	return Over{Name: "nil", Ctx: nil, Want: policy.ErrNilContext}
}

// OverContexts returns Canceled, Expired and Nil, in that order: every way a call's
// context can be over when the call arrives.
func OverContexts() []Over {
	return []Over{Canceled(), Expired(), Nil()}
}

// OwnDone is a long-lived context whose Done channel is not the standard library's:
// context.AfterFunc then watches it with one goroutine per registration, so that a
// registration left behind shows up in runtime.NumGoroutine. It is safe for concurrent
// use.
type OwnDone struct {
	context.Context
	done chan struct{}
	once sync.Once
}

// NewOwnDone returns a context that ends only when Cancel is called.
func NewOwnDone() *OwnDone {
	return &OwnDone{Context: context.Background(), done: make(chan struct{})}
}

// Done returns the context's own channel.
func (c *OwnDone) Done() <-chan struct{} { return c.done }

// Err returns context.Canceled once Cancel was called, nil before.
func (c *OwnDone) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}

// Cancel ends the context; later calls do nothing.
func (c *OwnDone) Cancel() { c.once.Do(func() { close(c.done) }) }

// SettleGoroutines polls every millisecond until at most want goroutines run, or 5s
// pass, and returns the last count.
func SettleGoroutines(want int) int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(time.Millisecond)
	}
}

// EagerClock is a manual clock whose timers fire at once, on their own goroutine, while
// AfterFunc waits up to 50ms for the function to return before it returns itself: a
// timer that fires before the code that armed it goes on. Now and Sleep are the manual
// clock's.
type EagerClock struct{ *clock.Manual }

type firedTimer struct{}

func (firedTimer) Stop() bool { return false }

// AfterFunc runs f at once on a goroutine of its own, and returns a Timer whose Stop
// reports false.
func (EagerClock) AfterFunc(_ time.Duration, f func()) clock.Timer {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(50 * time.Millisecond):
	}
	return firedTimer{}
}

// ErrBeforeDone cancels ctx with cancel while another goroutine reads ctx.Err in a loop,
// and reports whether that goroutine saw an error while ctx.Done was still open, which
// the context package forbids. Run it many times, with -race, to catch the window.
func ErrBeforeDone(ctx context.Context, cancel func()) bool {
	done := ctx.Done()
	var early bool
	var wg sync.WaitGroup
	started := make(chan struct{})
	wg.Go(func() {
		close(started)
		for ctx.Err() == nil {
		}
		select {
		case <-done:
		default:
			early = true
		}
	})
	<-started
	cancel()
	wg.Wait()
	return early
}
