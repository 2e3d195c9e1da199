package clock

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// targetForTest returns where the advances asked so far take m.
func (m *Manual) targetForTest() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.target
}

// Two Advance(10ms) calls that overlap, the second made while a timer function of the
// first still runs, add up to 20ms, and the timers run in order at their deadlines
// (fault: the clock ended at 11ms, the second advance counted from the running timer's
// deadline). Deterministic: the timer function blocks until the second advance is
// registered.
func TestManual_OverlappingAdvancesAddUp(t *testing.T) {
	m := NewManual()
	entered, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var runs []string
	record := func(name string) {
		mu.Lock()
		defer mu.Unlock()
		runs = append(runs, name+"@"+m.Now().String())
	}
	m.AfterFunc(time.Millisecond, func() {
		record("1ms")
		close(entered)
		<-release
		record("1ms-end")
	})
	m.AfterFunc(15*time.Millisecond, func() { record("15ms") })
	m.AfterFunc(19*time.Millisecond, func() { record("19ms") })
	m.AfterFunc(21*time.Millisecond, func() { record("21ms") })

	var wg sync.WaitGroup
	after := make([]time.Duration, 2)
	wg.Go(func() { m.Advance(10 * time.Millisecond); after[0] = m.Now() })
	<-entered
	wg.Go(func() { m.Advance(10 * time.Millisecond); after[1] = m.Now() })
	deadline := time.Now().Add(time.Minute)
	for m.targetForTest() != 20*time.Millisecond {
		require.True(t, time.Now().Before(deadline), "the second advance never registered")
		runtime.Gosched()
	}
	assert.Equal(t, time.Millisecond, m.Now(), "the clock stays at the running timer's deadline")
	close(release)
	wg.Wait()

	assert.Equal(t, 20*time.Millisecond, m.Now())
	assert.Equal(t, []time.Duration{20 * time.Millisecond, 20 * time.Millisecond}, after,
		"each advance returns once the clock has reached the sum")
	assert.Equal(t, []string{"1ms@1ms", "1ms-end@1ms", "15ms@15ms", "19ms@19ms"}, runs)
	assert.Equal(t, 1, m.PendingTasks(), "the 21ms timer is beyond the sum")
}

// A Sleep that overlaps a running Advance adds to it too, and one whose context ends
// while it waits for the running timers returns at once, its advance standing (fault:
// concurrent sleeps lost time).
func TestManual_OverlappingSleepsAddUp(t *testing.T) {
	m := NewManual()
	entered, release := make(chan struct{}), make(chan struct{})
	m.AfterFunc(time.Millisecond, func() { close(entered); <-release })

	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, m.Sleep(t.Context(), 10*time.Millisecond)) })
	<-entered
	wg.Go(func() { assert.NoError(t, m.Sleep(t.Context(), 10*time.Millisecond)) })
	ctx, cancel := context.WithCancel(t.Context())
	ended := make(chan error, 1)
	go func() { ended <- m.Sleep(ctx, 5*time.Millisecond) }()
	deadline := time.Now().Add(time.Minute)
	for m.targetForTest() != 25*time.Millisecond {
		require.True(t, time.Now().Before(deadline), "the sleeps never registered")
		runtime.Gosched()
	}
	cancel()
	assert.ErrorIs(t, <-ended, context.Canceled, "a sleep whose context ends while it waits returns at once")
	close(release)
	wg.Wait()
	assert.Equal(t, 25*time.Millisecond, m.Now(), "the canceled sleep's advance stands")
}
