package clock

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// Manual is a Clock that moves only when told to: with a Manual clock, permits, retry
// delays, timeouts and breaker waits come due only when the test advances it. It starts
// at 0.
//
// Advance moves it forward and runs the timers that fall due, in deadline order (timers
// with equal deadlines run in the order they were scheduled), each with the clock set to
// its deadline; timers that those functions schedule within the advanced span run too.
// Sleep advances the clock by d instead of blocking, so a call that waits for a permit on
// a Manual clock returns at once, with the clock moved on. PendingTasks reports the
// timers scheduled and not yet run or stopped.
//
// A Manual is safe for concurrent use. Timer functions run on the goroutine that calls
// Advance (or Sleep), never while the clock's lock is held, so they may use the clock.
// Each Advance runs the timers it takes in deadline order; when several goroutines advance
// the clock at once (concurrent Sleeps do), their timer functions may overlap, and a timer
// may then see Now() past its deadline. The clock itself never goes backwards.
type Manual struct {
	mu     sync.Mutex
	now    time.Duration
	seq    uint64
	timers timerHeap
}

// NewManual returns a Manual clock at time 0 with no pending timers.
func NewManual() *Manual { return &Manual{} }

// Now returns the clock's current time since its origin (time 0), in nanoseconds.
func (m *Manual) Now() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// Advance moves the clock forward by d, running every timer whose deadline is at or
// before the new time, in deadline order. d < 0 is treated as 0; Advance(0) runs the
// timers already due (those scheduled with a delay <= 0).
func (m *Manual) Advance(d time.Duration) {
	if d < 0 {
		d = 0
	}
	m.mu.Lock()
	target := satAdd(m.now, d)
	m.mu.Unlock()
	m.runUntil(target)
}

// AdvanceTo moves the clock to t, a time since its origin, and runs the timers due by
// then, as Advance does. A t before Now does not move the clock back; only the timers
// whose deadline is at or before t run.
func (m *Manual) AdvanceTo(t time.Duration) {
	m.runUntil(t)
}

func (m *Manual) runUntil(target time.Duration) {
	for {
		m.mu.Lock()
		if len(m.timers) == 0 || m.timers[0].deadline > target {
			if target > m.now {
				m.now = target
			}
			m.mu.Unlock()
			return
		}
		t := heap.Pop(&m.timers).(*manualTimer)
		t.index = -1
		if t.deadline > m.now {
			m.now = t.deadline
		}
		m.mu.Unlock()
		t.f()
	}
}

// PendingTasks returns the number of timers scheduled and not yet run or stopped.
func (m *Manual) PendingTasks() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.timers)
}

// Sleep advances the clock by d instead of blocking, running the timers that fall due. It returns ctx.Err() without moving the clock if ctx is already done, and
// ctx.Err() if ctx ended during the advance (e.g. canceled by a timer that fell due).
func (m *Manual) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.Advance(d)
	return ctx.Err() // a timer that fell due may have ended ctx before d elapsed
}

// AfterFunc schedules f to run when the clock reaches now+d. A delay <= 0 makes the
// timer due at once: it runs at the next Advance (Advance(0) included), on the goroutine
// that advances the clock.
func (m *Manual) AfterFunc(d time.Duration, f func()) Timer {
	if d < 0 {
		d = 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seq++
	t := &manualTimer{m: m, deadline: satAdd(m.now, d), seq: m.seq, f: f}
	heap.Push(&m.timers, t)
	return t
}

type manualTimer struct {
	m        *Manual
	deadline time.Duration
	seq      uint64
	index    int // position in the heap; -1 once run or stopped
	f        func()
}

// Stop removes the timer; false if it has already run or was stopped.
func (t *manualTimer) Stop() bool {
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	if t.index < 0 {
		return false
	}
	heap.Remove(&t.m.timers, t.index)
	t.index = -1
	return true
}

type timerHeap []*manualTimer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].deadline != h[j].deadline {
		return h[i].deadline < h[j].deadline
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*manualTimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	n := len(old)
	t := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	return t
}

// satAdd returns a+b, saturating at the largest time.Duration instead of overflowing.
func satAdd(a, b time.Duration) time.Duration {
	if b > 0 && a > maxDuration-b {
		return maxDuration
	}
	return a + b
}

const maxDuration = time.Duration(1<<63 - 1)
