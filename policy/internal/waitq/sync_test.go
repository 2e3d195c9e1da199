package waitq_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/rejections"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/internal/waitq"
)

// The kinds of event of the test policy.
var (
	testRejected = policy.RegisterEventKind(policy.EventKindInfo{Name: "TestRejected"})
	testWaited   = policy.RegisterEventKind(policy.EventKindInfo{Name: "TestWaited"})
)

const maxWait = 50 * time.Millisecond

var errFull = errors.New("full")

// fullError is the test policy's rejection: it matches errFull and its cause.
type fullError struct{ cause error }

func (e *fullError) Error() string        { return "full" }
func (e *fullError) Is(target error) bool { return target == errFull }
func (e *fullError) Unwrap() error        { return e.cause }

// syncPool is a pool with a blocking wait, its events recorded, and the room given back
// by GiveBack counted.
type syncPool struct {
	*pool
	clk      clock.Clock
	pub      contract.Events
	rej      rejections.Set[*fullError]
	s        waitq.Sync[int64, *fullError]
	maxWait  time.Duration  // how long each Wait may wait
	recheck  func()         // run by Recheck, before it dispatches
	gaveBack []int64        // the room given back by GiveBack
	mu       sync.Mutex     // guards events and gaveBack
	events   []policy.Event // the events published, in order
}

func newSyncPool(free int64, clk clock.Clock) *syncPool {
	p := &syncPool{pool: newPool(free), clk: clk, maxWait: maxWait}
	p.pub = contract.Events{ID: "test", Clock: clk, Listener: func(e policy.Event) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.events = append(p.events, e)
	}}
	p.rej = rejections.New(func(cause error) *fullError { return &fullError{cause} })
	p.s = waitq.Sync[int64, *fullError]{
		Events: waitq.Events[*fullError]{Pub: &p.pub, Rej: &p.rej, Clock: clk,
			Rejected: testRejected, Waited: testWaited},
		Queue: &p.q,
		Recheck: func() {
			if p.recheck != nil {
				p.recheck()
			}
			if p.free.Load() > 0 {
				p.q.Dispatch()
			}
		},
		GiveBack: func(r int64) {
			p.mu.Lock()
			p.gaveBack = append(p.gaveBack, r)
			p.mu.Unlock()
			p.release()
		},
	}
	return p
}

func (p *syncPool) published() []policy.Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]policy.Event(nil), p.events...)
}

func (p *syncPool) givenBack() []int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int64(nil), p.gaveBack...)
}

type result struct {
	room int64
	err  error
}

// waitAsync runs Wait on a goroutine and returns once the waiter is queued.
func (p *syncPool) waitAsync(ctx context.Context) <-chan result {
	before := p.queued.Load()
	ch := make(chan result, 1)
	go func() {
		r, err := p.s.Wait(ctx, p.maxWait)
		ch <- result{r, err}
	}()
	for p.queued.Load() == before {
		runtime.Gosched()
	}
	return ch
}

// A waiter handed room by the queue holds it and publishes the waited event, with how
// long it waited; its MaxWait timer is stopped.
func TestSyncWait_Granted(t *testing.T) {
	clk := clock.NewManual()
	p := newSyncPool(0, clk)
	ch := p.waitAsync(context.Background())
	assert.Equal(t, 1, clk.PendingTasks(), "the MaxWait timer")
	clk.Advance(20 * time.Millisecond)
	p.release()
	r := <-ch
	require.NoError(t, r.err)
	assert.Equal(t, int64(1), r.room, "what take yielded is the caller's")
	assert.Zero(t, clk.PendingTasks(), "the timer is stopped")
	assert.Zero(t, p.queued.Load())
	assert.Equal(t, []policy.Event{{Kind: testWaited, Instance: "test", At: 20 * time.Millisecond,
		Wait: 20 * time.Millisecond}}, p.published())
	assert.Empty(t, p.givenBack())
}

// A waiter that finds room as it is queued (nobody queued) holds it and publishes
// nothing.
func TestSyncWait_AdmittedWhileQueueing(t *testing.T) {
	clk := clock.NewManual()
	p := newSyncPool(1, clk)
	r, err := p.s.Wait(context.Background(), p.maxWait)
	require.NoError(t, err)
	assert.Equal(t, int64(1), r)
	assert.Zero(t, clk.PendingTasks(), "the timer is stopped")
	assert.Empty(t, p.published())
}

// After MaxWait the waiter leaves the queue with the plain rejection and publishes the
// rejection event, with how long it waited.
func TestSyncWait_Expires(t *testing.T) {
	clk := clock.NewManual()
	p := newSyncPool(0, clk)
	ch := p.waitAsync(context.Background())
	clk.Advance(maxWait)
	r := <-ch
	assert.Same(t, p.rej.Plain, r.err)
	assert.Zero(t, r.room)
	assert.Zero(t, p.queued.Load(), "the waiter left the queue")
	assert.Equal(t, []policy.Event{{Kind: testRejected, Instance: "test", At: maxWait,
		Wait: maxWait, Err: p.rej.Plain}}, p.published())
	p.release()
	assert.Equal(t, int64(1), p.free.Load(), "room released later stays free")
}

// immediate is a clock whose timers fire at once, as AfterFunc schedules them.
type immediate struct{ clock.Clock }

func (immediate) AfterFunc(_ time.Duration, f func()) clock.Timer {
	f()
	return stopped{}
}

type stopped struct{}

func (stopped) Stop() bool { return false }

// A MaxWait timer that fires before the waiter is queued keeps it out of the queue: the
// plain rejection, and the rejection event.
func TestSyncWait_TimerBeforeQueueing(t *testing.T) {
	p := newSyncPool(0, immediate{clock.NewManual()})
	_, err := p.s.Wait(context.Background(), p.maxWait)
	assert.Same(t, p.rej.Plain, err)
	assert.Zero(t, p.queued.Load(), "never queued")
	assert.Equal(t, []policy.Event{{Kind: testRejected, Instance: "test", Err: p.rej.Plain}},
		p.published())
}

// ctx ending while the waiter waits takes it out of the queue: the rejection matching
// ctx's error, the rejection event, the timer stopped.
func TestSyncWait_ContextEnds(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cause error
	}{{"canceled", context.Canceled}, {"deadline", context.DeadlineExceeded}, {"other", errors.New("gone")}} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewManual()
			p := newSyncPool(0, clk)
			ctx, cancel := context.WithCancelCause(context.Background())
			ch := p.waitAsync(&causeCtx{ctx})
			clk.Advance(10 * time.Millisecond)
			cancel(tc.cause)
			r := <-ch
			require.ErrorIs(t, r.err, errFull)
			require.ErrorIs(t, r.err, tc.cause)
			assert.Zero(t, p.queued.Load())
			assert.Zero(t, clk.PendingTasks(), "the timer is stopped")
			assert.Equal(t, []policy.Event{{Kind: testRejected, Instance: "test",
				At: 10 * time.Millisecond, Wait: 10 * time.Millisecond, Err: r.err}}, p.published())
			assert.Empty(t, p.givenBack())
		})
	}
}

// causeCtx is a context whose Err is its cause, as a context with another error than
// the two standard ones is.
type causeCtx struct{ context.Context }

func (c *causeCtx) Err() error { return context.Cause(c.Context) }

// Room handed to a waiter as its ctx ends: when the wait sees ctx first, the room is
// given back with GiveBack and the call is rejected with ctx's error; else it holds the
// room. Both happen over the rounds (select picks at random).
func TestSyncWait_GrantedAsContextEnds(t *testing.T) {
	var rejected, held int
	for i := 0; i < 1000 && (rejected == 0 || held == 0); i++ {
		clk := clock.NewManual()
		p := newSyncPool(0, clk)
		ctx, cancel := context.WithCancel(context.Background())
		p.recheck = func() { // both ready before the wait selects
			cancel()
			p.free.Add(1)
			p.q.Dispatch()
		}
		r, err := p.s.Wait(ctx, p.maxWait)
		if err != nil {
			rejected++
			require.Same(t, p.rej.Canceled, err)
			require.Equal(t, []int64{1}, p.givenBack(), "the room handed over is given back")
			require.Equal(t, int64(1), p.free.Load())
			require.Equal(t, []policy.Event{{Kind: testRejected, Instance: "test", Err: err}}, p.published())
		} else {
			held++
			require.Equal(t, int64(1), r)
			require.Empty(t, p.givenBack())
			require.Equal(t, []policy.Event{{Kind: testWaited, Instance: "test"}}, p.published())
		}
		require.Zero(t, clk.PendingTasks(), "the timer is stopped")
	}
	assert.NotZero(t, rejected, "the wait saw ctx first")
	assert.NotZero(t, held, "the wait saw the room first")
}

// A waiter whose MaxWait passes as its ctx ends is rejected as expired, whichever the
// wait sees first.
func TestSyncWait_ExpiresAsContextEnds(t *testing.T) {
	for i := 0; i < 200; i++ {
		clk := clock.NewManual()
		p := newSyncPool(0, clk)
		ctx, cancel := context.WithCancel(context.Background())
		p.recheck = func() {
			cancel()
			clk.Advance(maxWait) // runs the timer on this goroutine
		}
		_, err := p.s.Wait(ctx, p.maxWait)
		cancel()
		require.Same(t, p.rej.Plain, err)
		require.Empty(t, p.givenBack())
		require.Zero(t, p.queued.Load())
		require.Equal(t, []policy.Event{{Kind: testRejected, Instance: "test", At: maxWait,
			Wait: maxWait, Err: p.rej.Plain}}, p.published())
	}
}

// Without a listener the events publish nothing, and the rejections are the same.
func TestEvents_Unobserved(t *testing.T) {
	clk := clock.NewManual()
	pub := contract.Events{ID: "test", Clock: clk}
	rej := rejections.New(func(cause error) *fullError { return &fullError{cause} })
	e := waitq.Events[*fullError]{Pub: &pub, Rej: &rej, Clock: clk, Rejected: testRejected, Waited: testWaited}
	ctx := context.Background()
	assert.Same(t, rej.Plain, e.Expired(ctx, 0))
	assert.Same(t, rej.Deadline, e.RejectContext(ctx, 0, context.DeadlineExceeded))
	e.AdmitWaited(ctx, 0)
	e.Reject(ctx, 0, rej.Plain)
	e.Admit(ctx)
	var none context.Context // a call that came without one
	assert.Same(t, rej.Deadline, e.Refuse(none, context.DeadlineExceeded))
	clk.Advance(time.Second)
	assert.Equal(t, time.Second, e.Since(0))
	assert.Zero(t, e.Since(2*time.Second), "never negative")
}

// Many waiters, some of them canceled, handed room concurrently: every waiter ends, and
// no room is lost or handed twice (what is free at the end is what was released).
func TestSyncWait_Concurrent(t *testing.T) {
	p := newSyncPool(0, clock.System())
	p.maxWait = time.Hour
	var wg sync.WaitGroup
	const n = 200
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if i%3 == 0 {
				go cancel()
			}
			if _, err := p.s.Wait(ctx, p.maxWait); err == nil {
				p.release()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	released := int64(0)
	for loop := true; loop; {
		select {
		case <-done:
			loop = false
		default:
			if released < n {
				p.release()
				released++
			}
			runtime.Gosched()
		}
	}
	assert.Zero(t, p.queued.Load())
	assert.Equal(t, released, p.free.Load())
}
