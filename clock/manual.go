package clock

import (
	"container/heap"
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/resilience4go/resilience4go/internal/sat"
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
// A Manual is safe for concurrent use, and advances add up: Advance(d) and Sleep(ctx, d)
// move the clock d further than every advance asked before them, whether or not those
// have finished, so two goroutines that each advance 10ms move the clock 20ms, however
// their calls overlap. Timer functions run one at a time, in deadline order, each with
// Now() at its deadline until it returns (unless it advances the clock itself): when
// several goroutines advance the clock at once, one of them runs the timers that fall due
// while the others wait for it, and each returns once every timer due by the time it
// asked for has run. The clock never goes backwards.
//
// Timer functions run on a goroutine that advances the clock, never while the clock's
// lock is held, so they may use the clock, Advance and Sleep included: an advance made
// from a timer function adds to the one running it and runs the timers due by then at
// once, on that goroutine, before the timer function goes on. A timer function must not
// wait for another goroutine that advances the clock: that goroutine waits for the timer
// functions to run first.
type Manual struct {
	mu  sync.Mutex
	now time.Duration
	// target is where the advances asked so far take the clock: never before now.
	target time.Duration
	// reached is the time up to which every timer due has run: while timers run, just
	// before the deadline of the one running; otherwise now.
	reached time.Duration
	seq     uint64
	timers  timerHeap
	running bool   // a goroutine is running the timers due by target
	runner  uint64 // that goroutine's id, once it has called a timer function; else 0
	// moved, when not nil, is closed (and set to nil) when reached moves or the runner
	// stops: the advances waiting for the runner look again.
	moved chan struct{}
	stack [32]byte // goid's buffer, so that reading a goroutine id allocates nothing
}

// NewManual returns a Manual clock at time 0 with no pending timers.
func NewManual() *Manual { return &Manual{} }

// Now returns the clock's current time since its origin (time 0), in nanoseconds: while
// a timer function runs, its deadline.
func (m *Manual) Now() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// Advance moves the clock forward by d, running every timer whose deadline is at or
// before the new time, in deadline order, and returns once they have run. d < 0 is
// treated as 0; Advance(0) runs the timers already due (those scheduled with a delay
// <= 0). An Advance made while another is still running adds to it (see Manual). The
// clock saturates at the largest Duration instead of wrapping.
func (m *Manual) Advance(d time.Duration) {
	m.mu.Lock()
	m.target = sat.Add(m.target, max(d, 0))
	m.reach(nil, m.target)
}

// AdvanceTo moves the clock to t, a time since its origin, and runs the timers due by
// then, as Advance does. A t at or before the time the advances already asked for does
// not move the clock further (nor back); the call returns once the timers due by t have
// run, and runs those already due at the current time, as Advance(0) does, if no other
// goroutine is running timers.
func (m *Manual) AdvanceTo(t time.Duration) {
	m.mu.Lock()
	m.target = max(m.target, t)
	m.reach(nil, t)
}

// Sleep advances the clock by d instead of blocking, running the timers that fall due,
// as Advance does. It returns ctx.Err() without moving the clock if ctx is already done,
// and ctx.Err() if ctx ended during the advance (e.g. canceled by a timer that fell due,
// or while another goroutine was running the timers: the advance then stands, and the
// call returns at once). A d <= 0 runs the timers already due if no other goroutine is
// running timers, and otherwise returns at once. A nil ctx never ends.
func (m *Manual) Sleep(ctx context.Context, d time.Duration) error {
	var done <-chan struct{}
	if ctx != nil {
		if err := ctx.Err(); err != nil {
			return err
		}
		done = ctx.Done()
	}
	m.mu.Lock()
	if d <= 0 {
		m.reach(done, m.reached) // nothing to wait for
	} else {
		m.target = sat.Add(m.target, d)
		m.reach(done, m.target)
	}
	if ctx == nil {
		return nil
	}
	return ctx.Err() // a timer that fell due may have ended ctx before d elapsed
}

// reach returns once every timer due at or before t has run (or once cancel is closed).
// If no goroutine is running the timers, the caller does, up to target; a call from a
// timer function runs them too, on its goroutine; any other call waits for the
// goroutine that runs them. Called with m.mu held; it returns without it.
func (m *Manual) reach(cancel <-chan struct{}, t time.Duration) {
	for {
		if !m.running {
			m.runAll()
			m.mu.Unlock()
			return
		}
		if m.runner != 0 && m.runner == m.goid() { // from a timer function
			m.run()
			m.mu.Unlock()
			return
		}
		if m.reached >= t {
			m.mu.Unlock()
			return
		}
		if m.moved == nil {
			m.moved = make(chan struct{})
		}
		moved := m.moved
		m.mu.Unlock()
		select {
		case <-moved:
		case <-cancel:
			return
		}
		m.mu.Lock()
	}
}

// runAll makes the caller the goroutine that runs the timers, runs them, and gives the
// role up, also when a timer function panics (the panic goes on). Called with m.mu held;
// returns with it held.
func (m *Manual) runAll() {
	m.running = true
	ok := false
	defer func() {
		if !ok { // a timer function panicked: m.mu is not held
			m.mu.Lock()
			m.running, m.runner = false, 0
			m.signal()
			m.mu.Unlock()
		}
	}()
	m.run()
	m.running, m.runner = false, 0
	m.signal()
	ok = true
}

// run runs the timers due by target, one at a time in deadline order, each with the clock
// at its deadline, and then moves the clock to target. Called with m.mu held; returns
// with it held (a timer function that panics leaves it released).
func (m *Manual) run() {
	for len(m.timers) > 0 && m.timers[0].deadline <= m.target {
		t := heap.Pop(&m.timers).(*manualTimer)
		t.index = -1
		m.now = max(m.now, t.deadline)
		m.setReached(t.deadline - 1) // deadlines are never negative
		if m.runner == 0 {
			m.runner = m.goid()
		}
		m.mu.Unlock()
		t.f()
		m.mu.Lock()
	}
	m.now = max(m.now, m.target)
	m.setReached(m.now)
}

// setReached sets reached, and wakes the waiting advances if it moved on.
func (m *Manual) setReached(r time.Duration) {
	up := r > m.reached
	m.reached = r
	if up {
		m.signal()
	}
}

// signal wakes the advances waiting for the runner.
func (m *Manual) signal() {
	if m.moved != nil {
		close(m.moved)
		m.moved = nil
	}
}

// goid returns the calling goroutine's id, read from the first line of its stack trace
// ("goroutine 18 [running]:"). Only a Manual clock that runs timers reads it, to tell an
// advance made from a timer function from one made by another goroutine. Called with
// m.mu held (it uses m.stack).
func (m *Manual) goid() uint64 {
	n := runtime.Stack(m.stack[:], false)
	const prefix = len("goroutine ")
	var id uint64
	for _, c := range m.stack[min(prefix, n):n] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}

// PendingTasks returns the number of timers scheduled and not yet run or stopped.
func (m *Manual) PendingTasks() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.timers)
}

// AfterFunc schedules f to run when the clock reaches now+d (now being, while a timer
// function runs, that timer's deadline). A delay <= 0 makes the timer due at once: it
// runs at the next Advance (Advance(0) included), on the goroutine that advances the
// clock, or after the running timer if the clock is being advanced.
func (m *Manual) AfterFunc(d time.Duration, f func()) Timer {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seq++
	t := &manualTimer{m: m, deadline: sat.Add(m.now, max(d, 0)), seq: m.seq, f: f}
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

// Stop removes the timer; false if it has already run (or started) or was stopped.
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
