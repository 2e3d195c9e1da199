package waitq_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/internal/waitq"
)

// pool is the room of a test queue: free slots, each taking numbered (1, 2, ...), and
// the waiters it has granted, in order.
type pool struct {
	free   atomic.Int64
	taken  atomic.Int64 // how many times take found room
	tries  atomic.Int64 // how many times take was called
	queued atomic.Int64
	q      waitq.Queue[int64]

	quiet   bool // Granted records nothing (benchmarks)
	mu      sync.Mutex
	granted []int // ids of the waiters granted by Dispatch, in order
}

func newPool(free int64) *pool {
	p := &pool{}
	p.free.Store(free)
	p.q.Init(&p.queued, func(policy.Priority) (int64, bool) { return p.take() })
	return p
}

func (p *pool) take() (int64, bool) {
	p.tries.Add(1)
	for {
		f := p.free.Load()
		if f <= 0 {
			return 0, false
		}
		if p.free.CompareAndSwap(f, f-1) {
			return p.taken.Add(1), true
		}
	}
}

// release gives a slot back and dispatches if anyone waits, as the policies do.
func (p *pool) release() {
	p.free.Add(1)
	if p.queued.Load() != 0 {
		p.q.Dispatch()
	}
}

// enqueue queues w and, as the policies do, dispatches room that came meanwhile.
func (p *pool) enqueue(w *waiter) waitq.Result {
	r := p.q.Enqueue(&w.Waiter, w)
	if r == waitq.Queued && p.free.Load() > 0 {
		p.q.Dispatch()
	}
	return r
}

func (p *pool) grantedIDs() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int(nil), p.granted...)
}

type waiter struct {
	waitq.Waiter[int64]
	id      int
	p       *pool
	ch      chan struct{}   // one signal when granted
	onGrant func(w *waiter) // run in Granted, after it is recorded
}

func newWaiter(p *pool, id int) *waiter {
	return &waiter{id: id, p: p, ch: make(chan struct{}, 1)}
}

func (w *waiter) Granted() {
	if !w.p.quiet {
		w.p.mu.Lock()
		w.p.granted = append(w.p.granted, w.id)
		w.p.mu.Unlock()
	}
	w.ch <- struct{}{}
	if w.onGrant != nil {
		w.onGrant(w)
	}
}

// queueN queues n waiters, numbered from 0, on a pool without room.
func queueN(t *testing.T, p *pool, n int) []*waiter {
	t.Helper()
	ws := make([]*waiter, n)
	for i := range ws {
		ws[i] = newWaiter(p, i)
		require.Equal(t, waitq.Queued, p.enqueue(ws[i]), "waiter %d", i)
	}
	return ws
}

// Room is taken at once when nobody waits; the owner is not called.
func TestEnqueueAdmitsAtOnce(t *testing.T) {
	p := newPool(1)
	w := newWaiter(p, 1)
	assert.Equal(t, waitq.Admitted, p.q.Enqueue(&w.Waiter, w))
	assert.True(t, w.Holds())
	assert.Equal(t, int64(1), w.Room(), "what take yielded is the waiter's")
	assert.Zero(t, p.queued.Load())
	assert.Empty(t, p.grantedIDs(), "an admitted waiter's owner is not called")
	assert.False(t, p.q.Remove(&w.Waiter), "a waiter holding room is not removed")
	assert.True(t, w.Holds())
}

// Waiters are handed room oldest first, one per slot released.
func TestFIFOOrder(t *testing.T) {
	p := newPool(0)
	ws := make([]*waiter, 5)
	for i := range ws {
		ws[i] = newWaiter(p, i)
		require.Equal(t, waitq.Queued, p.enqueue(ws[i]))
		assert.Equal(t, int64(i+1), p.queued.Load(), "the counter counts the queued waiters")
		assert.False(t, ws[i].Holds())
		assert.Zero(t, ws[i].Room())
	}
	for i := range ws {
		p.release()
		assert.Equal(t, []int{0, 1, 2, 3, 4}[:i+1], p.grantedIDs())
		assert.True(t, ws[i].Holds())
		assert.Equal(t, int64(i+1), ws[i].Room())
		assert.Equal(t, int64(len(ws)-i-1), p.queued.Load())
	}
	assert.Zero(t, p.free.Load(), "every slot released went to a waiter")
}

// While anyone waits, a newcomer queues behind them even if room is free (no barging);
// Dispatch then serves the oldest.
func TestNoBarging(t *testing.T) {
	p := newPool(0)
	first, second := newWaiter(p, 1), newWaiter(p, 2)
	require.Equal(t, waitq.Queued, p.q.Enqueue(&first.Waiter, first))
	p.free.Add(1) // room, not dispatched yet
	assert.Equal(t, waitq.Queued, p.q.Enqueue(&second.Waiter, second), "room is not taken past a waiter")
	assert.Equal(t, int64(1), p.free.Load())
	p.q.Dispatch()
	assert.Equal(t, []int{1}, p.grantedIDs())
	assert.False(t, second.Holds())
	assert.Equal(t, int64(1), p.queued.Load())
}

// A waiter removed before Enqueue runs (its timer fired first) is never queued.
func TestRemoveBeforeQueueing(t *testing.T) {
	p := newPool(1)
	w := newWaiter(p, 1)
	assert.True(t, p.q.Remove(&w.Waiter))
	assert.False(t, p.q.Remove(&w.Waiter), "removed once")
	assert.Equal(t, waitq.Removed, p.q.Enqueue(&w.Waiter, w))
	assert.False(t, w.Holds())
	assert.Zero(t, p.queued.Load())
	assert.Zero(t, p.tries.Load(), "a removed waiter takes no room")
	assert.Equal(t, int64(1), p.free.Load())
}

// Removing queued waiters (at the front, middle and back) unlinks them: the others keep
// their order and the removed never get room.
func TestRemoveWhileQueued(t *testing.T) {
	p := newPool(0)
	ws := queueN(t, p, 6)
	for _, i := range []int{0, 3, 5} { // front, middle, back
		assert.True(t, p.q.Remove(&ws[i].Waiter), "waiter %d", i)
		assert.False(t, p.q.Remove(&ws[i].Waiter), "waiter %d removed twice", i)
	}
	assert.Equal(t, int64(3), p.queued.Load())
	p.free.Add(10)
	p.q.Dispatch()
	assert.Equal(t, []int{1, 2, 4}, p.grantedIDs())
	assert.Zero(t, p.queued.Load())
	assert.Equal(t, int64(7), p.free.Load(), "only the waiters left took room")
	for _, i := range []int{0, 3, 5} {
		assert.False(t, ws[i].Holds(), "waiter %d", i)
	}

	// The queue, emptied, admits at once again, and queues from scratch.
	w := newWaiter(p, 9)
	assert.Equal(t, waitq.Admitted, p.q.Enqueue(&w.Waiter, w))
}

// A waiter handed room can no longer be removed: Remove reports false.
func TestRemoveAfterGranted(t *testing.T) {
	p := newPool(0)
	w := newWaiter(p, 1)
	require.Equal(t, waitq.Queued, p.enqueue(w))
	p.release()
	<-w.ch
	assert.False(t, p.q.Remove(&w.Waiter))
	assert.True(t, w.Holds())
	assert.Zero(t, p.queued.Load())
}

// Dispatch stops at the first waiter it finds no room for; an empty queue takes no room.
func TestDispatchStopsWithoutRoom(t *testing.T) {
	p := newPool(0)
	p.q.Dispatch()
	assert.Zero(t, p.tries.Load(), "nobody waits: take is not called")

	ws := queueN(t, p, 4)
	p.free.Add(2)
	p.q.Dispatch()
	assert.Equal(t, []int{0, 1}, p.grantedIDs())
	assert.Equal(t, int64(2), p.queued.Load())
	assert.False(t, ws[2].Holds())
	assert.False(t, ws[3].Holds())

	tries := p.tries.Load()
	p.q.Dispatch()
	assert.Equal(t, tries+1, p.tries.Load(), "one look for room, then it stops")
	assert.Equal(t, []int{0, 1}, p.grantedIDs())
}

// A panic in Granted goes on to Dispatch's caller and leaves the queue consistent: the
// waiter holds its room, it is out of the queue, and the next Dispatch serves the next.
func TestGrantedPanicLeavesQueueConsistent(t *testing.T) {
	p := newPool(0)
	ws := queueN(t, p, 3)
	ws[0].onGrant = func(*waiter) { panic("boom") }
	p.free.Add(1)
	assert.PanicsWithValue(t, "boom", p.q.Dispatch)
	assert.True(t, ws[0].Holds())
	assert.Equal(t, int64(2), p.queued.Load())
	assert.False(t, p.q.Remove(&ws[0].Waiter))

	p.release() // the dispatching flag was reset: this dispatch, or the one the panic left, runs
	requireGranted(t, ws[1])
	assert.Equal(t, []int{0, 1}, p.grantedIDs())
	assert.True(t, p.q.Remove(&ws[2].Waiter))
	assert.Zero(t, p.queued.Load())
}

// A Granted that gives its room back and then panics (a queued call whose function
// panics as it starts) leaves no waiter behind while room is free: as the panic unwinds,
// the room goes on to the next waiters, on the same goroutine, and the panic then goes on
// to the caller; a second waiter that panics the same way has its panic go on in place
// of the first (fault: the Dispatch of the room given back returned at once, and the
// next waiter stayed queued with a slot free).
func TestGrantedPanicAfterGivingRoomBackServesTheNext(t *testing.T) {
	p := newPool(0)
	ws := queueN(t, p, 4)
	for i, w := range ws[:2] {
		w.onGrant = func(*waiter) {
			p.release()
			panic(fmt.Sprint("boom ", i))
		}
	}
	assert.PanicsWithValue(t, "boom 1", p.release, "the last panic goes on")
	assert.Equal(t, []int{0, 1, 2}, p.grantedIDs(), "granted in order, on the caller's goroutine")
	assert.Equal(t, int64(1), p.queued.Load(), "ws[3] waits for the slot ws[2] holds")
	assert.Zero(t, p.free.Load())
	p.release()
	requireGranted(t, ws[3])
}

// requireGranted waits for w's Granted, which may run on another goroutine; 10s bounds a
// failure, never a pass.
func requireGranted(t *testing.T, w *waiter) {
	t.Helper()
	select {
	case <-w.ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("waiter %d was never granted", w.id)
	}
}

// A Granted that releases room at once (a call that completes as it starts) calls
// Dispatch while a dispatch runs: that call returns at once, and the running loop hands
// the room on, so a long queue is served without recursion.
func TestDispatchFromGrantedDoesNotRecurse(t *testing.T) {
	p := newPool(0)
	const n = 100
	depth, maxDepth := 0, 0
	for i := range n {
		w := newWaiter(p, i)
		w.onGrant = func(*waiter) {
			depth++
			maxDepth = max(maxDepth, depth)
			p.release()
			depth--
		}
		require.Equal(t, waitq.Queued, p.enqueue(w))
	}
	p.release()
	ids := p.grantedIDs()
	require.Len(t, ids, n)
	for i, id := range ids {
		assert.Equal(t, i, id)
	}
	assert.Equal(t, 1, maxDepth, "each Granted runs on the one dispatching loop")
	assert.Zero(t, p.queued.Load())
	assert.Equal(t, int64(1), p.free.Load())
}

// Enqueue, Remove and Dispatch allocate nothing.
func TestNoAllocations(t *testing.T) {
	p := newPool(0)
	w := newWaiter(p, 1)
	allocs := testing.AllocsPerRun(1000, func() {
		w.Waiter = waitq.Waiter[int64]{}
		p.q.Enqueue(&w.Waiter, w)
		p.q.Remove(&w.Waiter)
		p.q.Dispatch()
	})
	assert.Zero(t, allocs)
}

// Many goroutines queue, give up and release at once; each waiter ends either holding
// room (its owner called once) or removed, room is never over-used, and nothing is left
// queued. Run it with -race.
func TestConcurrentEnqueueRemoveDispatch(t *testing.T) {
	const (
		slots      = 3
		goroutines = 8
		rounds     = 1000
	)
	p := newPool(slots)
	var inUse, maxInUse, grants, removals atomic.Int64
	use := func() {
		n := inUse.Add(1)
		for {
			m := maxInUse.Load()
			if n <= m || maxInUse.CompareAndSwap(m, n) {
				break
			}
		}
		inUse.Add(-1)
		p.release()
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for i := range rounds {
				w := newWaiter(p, g*rounds+i)
				giveUp := rng.IntN(3) == 0
				if rng.IntN(8) == 0 && p.q.Remove(&w.Waiter) { // removed before queueing
					assert.Equal(t, waitq.Removed, p.enqueue(w))
					removals.Add(1)
					continue
				}
				switch p.enqueue(w) {
				case waitq.Admitted:
					grants.Add(1)
					use()
					continue
				case waitq.Removed:
					t.Error("a waiter not removed was left out")
					return
				}
				if giveUp && p.q.Remove(&w.Waiter) {
					removals.Add(1)
					continue
				}
				<-w.ch // granted (also when giving up lost to a grant)
				assert.True(t, w.Holds())
				grants.Add(1)
				use()
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int64(goroutines*rounds), grants.Load()+removals.Load(), "every waiter ends once")
	assert.LessOrEqual(t, maxInUse.Load(), int64(slots), "room is never over-used")
	assert.Zero(t, p.queued.Load())
	assert.Equal(t, int64(slots), p.free.Load(), "every slot came back")
	assert.Equal(t, grants.Load(), p.taken.Load(), "every grant took room once")
}

// One waiter queued, then handed the slot released for it.
func BenchmarkEnqueueDispatch(b *testing.B) {
	p := newPool(0)
	p.quiet = true
	w := newWaiter(p, 1)
	b.ReportAllocs()
	for b.Loop() {
		w.Waiter = waitq.Waiter[int64]{}
		if p.q.Enqueue(&w.Waiter, w) != waitq.Queued {
			b.Fatal("not queued")
		}
		p.release()
		<-w.ch
	}
}
