package clock_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
)

// generous is the bound for real-clock waits: long enough never to flake on a loaded
// machine, short enough to fail a hung test.
const generous = time.Minute

func TestSystem_NowIsMonotonic(t *testing.T) {
	c := clock.System()
	prev := c.Now()
	require.GreaterOrEqual(t, prev, time.Duration(0))
	for range 10_000 {
		now := c.Now()
		require.GreaterOrEqual(t, now, prev, "Now went backwards")
		prev = now
	}
}

func TestSystem_NowIncreasesAcrossSleep(t *testing.T) {
	c := clock.System()
	before := c.Now()
	require.NoError(t, c.Sleep(context.Background(), 2*time.Millisecond))
	after := c.Now()
	assert.GreaterOrEqual(t, after-before, 2*time.Millisecond)
	assert.Less(t, after-before, generous)
}

func TestSystem_SleepReturnsNilAfterD(t *testing.T) {
	c := clock.System()
	start := time.Now()
	err := c.Sleep(context.Background(), 5*time.Millisecond)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), 5*time.Millisecond)
}

func TestSystem_SleepNonPositiveReturnsAtOnce(t *testing.T) {
	c := clock.System()
	start := time.Now()
	require.NoError(t, c.Sleep(context.Background(), 0))
	require.NoError(t, c.Sleep(context.Background(), -time.Hour))
	assert.Less(t, time.Since(start), generous)
}

func TestSystem_SleepContextAlreadyDone(t *testing.T) {
	c := clock.System()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	err := c.Sleep(ctx, time.Hour)
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), generous)
	// Even d <= 0 reports the done context.
	require.ErrorIs(t, c.Sleep(ctx, 0), context.Canceled)
}

func TestSystem_SleepContextEndsFirst(t *testing.T) {
	c := clock.System()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := c.Sleep(ctx, time.Hour)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), generous)
}

func TestSystem_SleepCanceledWhileSleeping(t *testing.T) {
	c := clock.System()
	ctx, cancel := context.WithCancel(context.Background())
	timer := c.AfterFunc(time.Millisecond, cancel)
	defer timer.Stop()
	err := c.Sleep(ctx, time.Hour)
	require.ErrorIs(t, err, context.Canceled)
}

func TestSystem_AfterFuncRuns(t *testing.T) {
	c := clock.System()
	ran := make(chan time.Duration, 1)
	scheduled := c.Now()
	c.AfterFunc(time.Millisecond, func() { ran <- c.Now() })
	select {
	case at := <-ran:
		assert.GreaterOrEqual(t, at-scheduled, time.Millisecond)
	case <-time.After(generous):
		t.Fatal("AfterFunc did not run")
	}
}

func TestSystem_AfterFuncStop(t *testing.T) {
	c := clock.System()
	ran := make(chan struct{}, 1)
	timer := c.AfterFunc(time.Hour, func() { ran <- struct{}{} })
	assert.True(t, timer.Stop(), "first Stop of a pending timer")
	assert.False(t, timer.Stop(), "second Stop")
	select {
	case <-ran:
		t.Fatal("stopped timer ran")
	default:
	}
}

func TestSystem_AfterFuncStopAfterRun(t *testing.T) {
	c := clock.System()
	ran := make(chan struct{})
	timer := c.AfterFunc(0, func() { close(ran) })
	select {
	case <-ran:
	case <-time.After(generous):
		t.Fatal("AfterFunc did not run")
	}
	assert.False(t, timer.Stop(), "Stop after the function ran")
}
