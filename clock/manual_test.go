package clock_test

import (
	"context"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
)

var _ clock.Clock = (*clock.Manual)(nil)

const maxDuration = time.Duration(math.MaxInt64)

// recorder collects the clock times at which timers ran, by name.
type recorder struct {
	mu   sync.Mutex
	runs []run
}

type run struct {
	name string
	at   time.Duration
}

func (r *recorder) timer(m *clock.Manual, name string) func() {
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.runs = append(r.runs, run{name, m.Now()})
	}
}

func (r *recorder) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.runs))
	for i, x := range r.runs {
		out[i] = x.name
	}
	return out
}

func TestManual_StartsAtZero(t *testing.T) {
	m := clock.NewManual()
	assert.Equal(t, time.Duration(0), m.Now())
	assert.Equal(t, 0, m.PendingTasks())
}

// SPEC CL-1: the manual clock moves only when told to.
func TestManual_CL1_MovesOnlyOnAdvance(t *testing.T) {
	m := clock.NewManual()
	assert.Equal(t, time.Duration(0), m.Now())
	m.Advance(150 * time.Millisecond)
	assert.Equal(t, 150*time.Millisecond, m.Now())
	m.Advance(time.Second)
	assert.Equal(t, 1150*time.Millisecond, m.Now())
	m.Advance(-time.Hour) // negative is treated as 0
	assert.Equal(t, 1150*time.Millisecond, m.Now())
}

// SPEC CL-2: timers fire in deadline order, equal deadlines in scheduling order, each with
// Now() at its own deadline.
func TestManual_CL2_AdvanceRunsDueTimersInDeadlineOrder(t *testing.T) {
	m := clock.NewManual()
	var r recorder
	m.AfterFunc(30*time.Millisecond, r.timer(m, "30"))
	m.AfterFunc(10*time.Millisecond, r.timer(m, "10a"))
	m.AfterFunc(20*time.Millisecond, r.timer(m, "20"))
	m.AfterFunc(10*time.Millisecond, r.timer(m, "10b"))
	m.AfterFunc(10*time.Millisecond, r.timer(m, "10c"))
	require.Equal(t, 5, m.PendingTasks())

	m.Advance(100 * time.Millisecond)

	assert.Equal(t, []run{
		{"10a", 10 * time.Millisecond},
		{"10b", 10 * time.Millisecond},
		{"10c", 10 * time.Millisecond},
		{"20", 20 * time.Millisecond},
		{"30", 30 * time.Millisecond},
	}, r.runs)
	assert.Equal(t, 100*time.Millisecond, m.Now())
	assert.Equal(t, 0, m.PendingTasks())
}

// SPEC CL-2: a timer whose deadline is exactly the new time runs; one just beyond does not.
func TestManual_CL2_DeadlineBoundary(t *testing.T) {
	m := clock.NewManual()
	var r recorder
	m.AfterFunc(10*time.Millisecond, r.timer(m, "at"))
	m.AfterFunc(10*time.Millisecond+1, r.timer(m, "beyond"))
	m.Advance(10 * time.Millisecond)
	assert.Equal(t, []string{"at"}, r.names())
	assert.Equal(t, 1, m.PendingTasks())
	m.Advance(1)
	assert.Equal(t, []string{"at", "beyond"}, r.names())
}

// SPEC CL-2: timers scheduled by timers within the advanced span run in the same Advance;
// those beyond it stay pending.
func TestManual_CL2_TimersScheduledByTimers(t *testing.T) {
	m := clock.NewManual()
	var r recorder
	m.AfterFunc(10*time.Millisecond, func() {
		r.timer(m, "outer")()
		m.AfterFunc(5*time.Millisecond, func() { // due at 15ms: inside the span
			r.timer(m, "inner")()
			m.AfterFunc(0, r.timer(m, "inner-now")) // due at 15ms too
		})
		m.AfterFunc(25*time.Millisecond, r.timer(m, "late")) // due at 35ms: beyond the span
	})

	m.Advance(20 * time.Millisecond)

	assert.Equal(t, []run{
		{"outer", 10 * time.Millisecond},
		{"inner", 15 * time.Millisecond},
		{"inner-now", 15 * time.Millisecond},
	}, r.runs)
	assert.Equal(t, 20*time.Millisecond, m.Now())
	assert.Equal(t, 1, m.PendingTasks(), "the timer beyond the span stays pending")

	m.Advance(15 * time.Millisecond)
	assert.Equal(t, []string{"outer", "inner", "inner-now", "late"}, r.names())
	assert.Equal(t, run{"late", 35 * time.Millisecond}, r.runs[3])
}

func TestManual_TimersBeyondSpanStayPending(t *testing.T) {
	m := clock.NewManual()
	var ran atomic.Int32
	m.AfterFunc(time.Second, func() { ran.Add(1) })
	m.Advance(999 * time.Millisecond)
	assert.Equal(t, int32(0), ran.Load())
	assert.Equal(t, 1, m.PendingTasks())
	m.Advance(time.Millisecond)
	assert.Equal(t, int32(1), ran.Load())
	m.Advance(time.Hour)
	assert.Equal(t, int32(1), ran.Load(), "a timer runs once")
}

// SPEC CL-3: PendingTasks counts timers scheduled and not yet run or stopped.
func TestManual_CL3_PendingTasks(t *testing.T) {
	m := clock.NewManual()
	assert.Equal(t, 0, m.PendingTasks())
	a := m.AfterFunc(10*time.Millisecond, func() {})
	m.AfterFunc(20*time.Millisecond, func() {})
	m.AfterFunc(30*time.Millisecond, func() {})
	assert.Equal(t, 3, m.PendingTasks())

	require.True(t, a.Stop())
	assert.Equal(t, 2, m.PendingTasks(), "a stopped timer is not pending")

	m.Advance(20 * time.Millisecond)
	assert.Equal(t, 1, m.PendingTasks(), "a timer that ran is not pending")

	m.Advance(10 * time.Millisecond)
	assert.Equal(t, 0, m.PendingTasks())
}

// SPEC CL-3: inside its own function, a running timer is no longer pending.
func TestManual_CL3_RunningTimerIsNotPending(t *testing.T) {
	m := clock.NewManual()
	m.AfterFunc(time.Millisecond, func() {})
	var seen int
	m.AfterFunc(time.Millisecond, func() { seen = m.PendingTasks() })
	m.AfterFunc(time.Hour, func() {})
	m.Advance(time.Millisecond)
	assert.Equal(t, 1, seen, "only the one-hour timer is pending while the second runs")
}

func TestManual_StopBeforeRun(t *testing.T) {
	m := clock.NewManual()
	var ran atomic.Bool
	timer := m.AfterFunc(time.Second, func() { ran.Store(true) })
	assert.True(t, timer.Stop())
	assert.False(t, timer.Stop(), "second Stop")
	m.Advance(time.Hour)
	assert.False(t, ran.Load(), "a stopped timer never runs")
}

func TestManual_StopAfterRun(t *testing.T) {
	m := clock.NewManual()
	var ran atomic.Int32
	timer := m.AfterFunc(time.Second, func() { ran.Add(1) })
	m.Advance(time.Second)
	require.Equal(t, int32(1), ran.Load())
	assert.False(t, timer.Stop())
}

func TestManual_StopInsideOwnFunction(t *testing.T) {
	m := clock.NewManual()
	var stopped = true
	var timer clock.Timer
	timer = m.AfterFunc(time.Second, func() { stopped = timer.Stop() })
	m.Advance(time.Second)
	assert.False(t, stopped, "a running timer can no longer be stopped")
}

// SPEC CL-2: a timer stopped by an earlier timer of the same Advance does not run.
func TestManual_CL2_TimerStoppedByEarlierTimer(t *testing.T) {
	m := clock.NewManual()
	var r recorder
	var stopped bool
	later := m.AfterFunc(20*time.Millisecond, r.timer(m, "later"))
	m.AfterFunc(10*time.Millisecond, func() { stopped = later.Stop() })
	m.Advance(time.Second)
	assert.True(t, stopped)
	assert.Empty(t, r.names())
	assert.Equal(t, 0, m.PendingTasks())
}

// SPEC CL-2: Sleep on a manual clock advances it instead of blocking, running due timers.
func TestManual_CL2_SleepAdvances(t *testing.T) {
	m := clock.NewManual()
	var r recorder
	m.AfterFunc(50*time.Millisecond, r.timer(m, "due"))
	m.AfterFunc(150*time.Millisecond, r.timer(m, "later"))

	done := make(chan error, 1)
	go func() { done <- m.Sleep(context.Background(), 100*time.Millisecond) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("Manual.Sleep blocked")
	}

	assert.Equal(t, 100*time.Millisecond, m.Now())
	assert.Equal(t, []run{{"due", 50 * time.Millisecond}}, r.runs)
	assert.Equal(t, 1, m.PendingTasks())
}

func TestManual_SleepNonPositiveRunsDueTimersOnly(t *testing.T) {
	m := clock.NewManual()
	var r recorder
	m.AfterFunc(0, r.timer(m, "now"))
	m.AfterFunc(time.Nanosecond, r.timer(m, "later"))
	require.NoError(t, m.Sleep(context.Background(), -time.Second))
	assert.Equal(t, time.Duration(0), m.Now())
	assert.Equal(t, []string{"now"}, r.names())
}

// SPEC CL-2: with a context already done, Sleep returns its error and moves nothing.
func TestManual_CL2_SleepWithDoneContext(t *testing.T) {
	m := clock.NewManual()
	m.Advance(time.Second)
	var ran atomic.Bool
	m.AfterFunc(time.Millisecond, func() { ran.Store(true) })

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := m.Sleep(ctx, time.Minute)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, time.Second, m.Now(), "the clock did not move")
	assert.False(t, ran.Load(), "no timer ran")
	assert.Equal(t, 1, m.PendingTasks())
}

// Clock contract: Sleep returns ctx.Err() if ctx ends first. On a manual clock, a timer
// that falls due during the sleep may end it.
func TestManual_SleepContextEndedByTimerDuringSleep(t *testing.T) {
	m := clock.NewManual()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m.AfterFunc(10*time.Millisecond, cancel)
	err := m.Sleep(ctx, time.Second)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, time.Second, m.Now())
}

// AfterFunc with a delay <= 0 is due at once but runs only at the next Advance (Advance(0)
// included), in scheduling order, without moving the clock.
func TestManual_AfterFuncNonPositiveRunsAtNextAdvance(t *testing.T) {
	m := clock.NewManual()
	m.Advance(time.Second)
	var r recorder
	m.AfterFunc(0, r.timer(m, "zero"))
	m.AfterFunc(-time.Hour, r.timer(m, "negative"))
	assert.Empty(t, r.names(), "not run when scheduled")
	assert.Equal(t, 2, m.PendingTasks())

	m.Advance(0)

	assert.Equal(t, []run{{"zero", time.Second}, {"negative", time.Second}}, r.runs)
	assert.Equal(t, time.Second, m.Now())
	assert.Equal(t, 0, m.PendingTasks())
}

func TestManual_AdvanceTo(t *testing.T) {
	m := clock.NewManual()
	var r recorder
	m.AfterFunc(time.Second, r.timer(m, "1s"))
	m.AfterFunc(3*time.Second, r.timer(m, "3s"))

	m.AdvanceTo(2 * time.Second)
	assert.Equal(t, 2*time.Second, m.Now())
	assert.Equal(t, []string{"1s"}, r.names())

	m.AdvanceTo(time.Second) // earlier than now: the clock never goes back
	assert.Equal(t, 2*time.Second, m.Now())

	m.AdvanceTo(3 * time.Second)
	assert.Equal(t, []string{"1s", "3s"}, r.names())
}

// Timer functions run without the clock's lock: they may use every method of the clock.
func TestManual_TimerMayUseClock(t *testing.T) {
	m := clock.NewManual()
	var nested bool
	m.AfterFunc(time.Millisecond, func() {
		_ = m.Now()
		_ = m.PendingTasks()
		m.AfterFunc(time.Hour, func() {}).Stop()
		m.AfterFunc(0, func() { nested = true })
		m.Advance(0)
	})
	done := make(chan struct{})
	go func() { defer close(done); m.Advance(time.Millisecond) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("deadlock: a timer function used the clock")
	}
	assert.True(t, nested)
}

func TestManual_SaturatesNearMaxDuration(t *testing.T) {
	m := clock.NewManual()
	var r recorder
	m.AfterFunc(maxDuration, r.timer(m, "max"))
	m.Advance(maxDuration - time.Second)
	assert.Equal(t, maxDuration-time.Second, m.Now())
	assert.Empty(t, r.names())

	m.AfterFunc(time.Hour, r.timer(m, "beyond")) // now+1h overflows: saturates at max
	m.Advance(time.Hour)                         // likewise
	assert.Equal(t, maxDuration, m.Now(), "the clock saturates, never wraps negative")
	assert.Equal(t, []run{{"max", maxDuration}, {"beyond", maxDuration}}, r.runs)

	m.Advance(maxDuration)
	assert.Equal(t, maxDuration, m.Now())
	m.AfterFunc(maxDuration, r.timer(m, "again"))
	m.Advance(1)
	assert.Equal(t, []string{"max", "beyond", "again"}, r.names())
	assert.Equal(t, 0, m.PendingTasks())
}

// Concurrent use under -race: several goroutines schedule, stop and advance at once.
// Every timer either runs exactly once or is stopped (Stop returned true), never both,
// and the clock never goes backwards.
func TestManual_ConcurrentUse(t *testing.T) {
	m := clock.NewManual()
	const (
		workers = 8
		perWkr  = 500
	)
	type entry struct {
		ran     atomic.Int32
		stopped atomic.Bool
	}
	entries := make([][]entry, workers)
	var wg sync.WaitGroup
	for w := range workers {
		entries[w] = make([]entry, perWkr)
		wg.Go(func() {
			prev := m.Now()
			for i := range perWkr {
				e := &entries[w][i]
				timer := m.AfterFunc(time.Duration(i%7)*time.Millisecond, func() {
					e.ran.Add(1)
					if i%13 == 0 { // timers scheduling timers
						m.AfterFunc(time.Millisecond, func() {})
					}
				})
				switch i % 3 {
				case 0:
					e.stopped.Store(timer.Stop())
				case 1:
					m.Advance(time.Millisecond)
				}
				_ = m.PendingTasks()
				now := m.Now()
				if now < prev {
					t.Errorf("clock went backwards: %v after %v", now, prev)
				}
				prev = now
			}
		})
	}
	wg.Wait()
	m.Advance(time.Hour)

	require.Equal(t, 0, m.PendingTasks())
	for w := range workers {
		for i := range perWkr {
			e := &entries[w][i]
			if e.stopped.Load() {
				assert.Equal(t, int32(0), e.ran.Load(), "stopped timer %d/%d ran", w, i)
			} else {
				assert.Equal(t, int32(1), e.ran.Load(), "timer %d/%d ran %d times", w, i, e.ran.Load())
			}
		}
	}
}

// The reproducer of lost time, with real time making the advances overlap: a timer at
// 1ms whose function takes 50ms, and two Advance(10ms) calls 5ms apart. The advances add
// up to 20ms however the calls interleave (fault: Now() ended at 11ms).
func TestManual_ConcurrentAdvancesAddUp(t *testing.T) {
	m := clock.NewManual()
	var r recorder
	m.AfterFunc(time.Millisecond, func() {
		r.timer(m, "slow")()
		time.Sleep(50 * time.Millisecond) // real time: the second advance comes meanwhile
	})
	m.AfterFunc(15*time.Millisecond, r.timer(m, "15ms"))
	var wg sync.WaitGroup
	wg.Go(func() { m.Advance(10 * time.Millisecond) })
	time.Sleep(5 * time.Millisecond)
	wg.Go(func() { m.Advance(10 * time.Millisecond) })
	wg.Wait()
	assert.Equal(t, 20*time.Millisecond, m.Now())
	assert.Equal(t, []run{{"slow", time.Millisecond}, {"15ms", 15 * time.Millisecond}}, r.runs)
}

// Under -race, with many goroutines advancing at once: the advances add up, timer
// functions never overlap, and each runs in deadline order with Now() at its deadline
// from start to end (fault: overlapping advances lost time and ran timers side by side).
func TestManual_ConcurrentAdvancesRunTimersOneAtATimeInOrder(t *testing.T) {
	m := clock.NewManual()
	const goroutines, perG, timers = 8, 50, 300
	var running atomic.Int32
	var mu sync.Mutex
	var order []time.Duration
	for i := range timers {
		at := time.Duration(i+1) * time.Millisecond
		m.AfterFunc(at, func() {
			if running.Add(1) != 1 {
				t.Errorf("timer %v runs while another does", at)
			}
			start := m.Now()
			runtime.Gosched()
			end := m.Now()
			if start != at || end != at {
				t.Errorf("timer %v ran from %v to %v", at, start, end)
			}
			mu.Lock()
			order = append(order, at)
			mu.Unlock()
			running.Add(-1)
		})
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perG {
				if (g+i)%2 == 0 {
					m.Advance(time.Millisecond)
				} else {
					assert.NoError(t, m.Sleep(context.Background(), time.Millisecond))
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, time.Duration(goroutines*perG)*time.Millisecond, m.Now())
	require.Len(t, order, timers)
	assert.True(t, slices.IsSorted(order), "timers ran in deadline order")
	assert.Zero(t, m.PendingTasks())
}

// A timer function that advances the clock (on its own goroutine) runs the timers due by
// then at once, without waiting for itself; its advance adds to the one running it.
func TestManual_AdvanceFromTimerFunction(t *testing.T) {
	m := clock.NewManual()
	var r recorder
	m.AfterFunc(time.Millisecond, func() {
		r.timer(m, "outer")()
		assert.NoError(t, m.Sleep(context.Background(), 5*time.Millisecond))
		r.timer(m, "outer-after-sleep")()
	})
	m.AfterFunc(3*time.Millisecond, r.timer(m, "3ms"))
	m.AfterFunc(12*time.Millisecond, r.timer(m, "12ms"))
	m.AfterFunc(16*time.Millisecond, r.timer(m, "16ms"))
	done := make(chan struct{})
	go func() { defer close(done); m.Advance(10 * time.Millisecond) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("deadlock: a timer function advanced the clock")
	}
	assert.Equal(t, []run{{"outer", time.Millisecond}, {"3ms", 3 * time.Millisecond},
		{"12ms", 12 * time.Millisecond}, {"outer-after-sleep", 15 * time.Millisecond}}, r.runs)
	assert.Equal(t, 15*time.Millisecond, m.Now(), "10ms + 5ms")
	assert.Equal(t, 1, m.PendingTasks())
}

// A timer function that panics makes Advance panic; the clock stays usable, and an
// advance that was waiting for it goes on.
func TestManual_PanickingTimerLeavesClockUsable(t *testing.T) {
	m := clock.NewManual()
	entered, release := make(chan struct{}), make(chan struct{})
	m.AfterFunc(time.Millisecond, func() {
		close(entered)
		<-release
		panic("boom")
	})
	var r recorder
	m.AfterFunc(5*time.Millisecond, r.timer(m, "5ms"))
	panicked := make(chan any, 1)
	go func() {
		defer func() { panicked <- recover() }()
		m.Advance(2 * time.Millisecond)
	}()
	<-entered
	waiter := make(chan struct{})
	go func() { defer close(waiter); m.Advance(3 * time.Millisecond) }()
	close(release)
	assert.Equal(t, "boom", <-panicked)
	select {
	case <-waiter:
	case <-time.After(time.Minute):
		t.Fatal("an advance waiting for a panicking timer never returned")
	}
	m.Advance(0)
	assert.Equal(t, 5*time.Millisecond, m.Now())
	assert.Equal(t, []run{{"5ms", 5 * time.Millisecond}}, r.runs)
}

// A nil context never ends: Sleep does not panic on either clock.
func TestSleepNilContext(t *testing.T) {
	var nilCtx context.Context
	m := clock.NewManual()
	require.NoError(t, m.Sleep(nilCtx, time.Second))
	assert.Equal(t, time.Second, m.Now())
	require.NoError(t, clock.System().Sleep(nilCtx, time.Microsecond))
}

// Sleep(0) made while another goroutine runs timers returns at once, as the Clock
// contract says of d <= 0, instead of waiting for that goroutine.
func TestManual_SleepZeroDuringAdvanceReturnsAtOnce(t *testing.T) {
	m := clock.NewManual()
	entered, release := make(chan struct{}), make(chan struct{})
	m.AfterFunc(time.Millisecond, func() { close(entered); <-release })
	var wg sync.WaitGroup
	wg.Go(func() { m.Advance(10 * time.Millisecond) })
	<-entered
	require.NoError(t, m.Sleep(context.Background(), 0))
	assert.Equal(t, time.Millisecond, m.Now())
	close(release)
	wg.Wait()
	assert.Equal(t, 10*time.Millisecond, m.Now())
}
