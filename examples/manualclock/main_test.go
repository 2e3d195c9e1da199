package main

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, "7 in stock, err <nil>, after 2s of clock time\n", out.String())
}

// README:begin test-retry
// The retry's delays advance the manual clock instead of sleeping: the call returns at
// once, with the clock 2s on.
func TestRetryWaitsOnTheClock(t *testing.T) {
	clk := clock.NewManual()
	reg, err := resilience.NewRegistry(resilience.WithClock(clk)) // every policy gets clk
	require.NoError(t, err)
	failures := 2 // the dependency fails twice, then answers
	get, err := newInventory(reg, func(ctx context.Context, sku string) (int, error) {
		if failures > 0 {
			failures--
			return 0, errUnavailable
		}
		return 7, nil
	})
	require.NoError(t, err)

	n, err := get(context.Background(), "apple")
	require.NoError(t, err)
	assert.Equal(t, 7, n)
	assert.Equal(t, 2*time.Second, clk.Now()) // two delays of 1s
}

// README:end test-retry

// README:begin test-permits
// Permits come back only when the test advances the clock; a call that may wait for its
// permit advances the clock itself.
func TestPermitsComeBackWithTheClock(t *testing.T) {
	clk := clock.NewManual()
	reg, err := resilience.NewRegistry(resilience.WithClock(clk))
	require.NoError(t, err)
	get, err := newInventory(reg, func(context.Context, string) (int, error) { return 7, nil })
	require.NoError(t, err)

	for range 5 { // the burst: 5 at once
		_, err := get(context.Background(), "apple")
		require.NoError(t, err)
	}
	assert.Equal(t, time.Duration(0), clk.Now())
	_, err = get(context.Background(), "apple") // waits 200ms for its permit
	require.NoError(t, err)
	assert.Equal(t, 200*time.Millisecond, clk.Now())

	l, err := reg.RateLimiter("Inventory.Get")
	require.NoError(t, err)
	assert.Equal(t, 0, l.Snapshot().AvailablePermits)
	clk.Advance(time.Second) // a quiet second: the burst is back
	assert.Equal(t, 5, l.Snapshot().AvailablePermits)
}

// README:end test-permits

// README:begin test-timeout
// A call that blocks until its context ends waits on a timer of the clock: another
// goroutine must advance the clock. PendingTasks says when the timer is armed.
func TestTimeoutFiresWhenTheClockMoves(t *testing.T) {
	clk := clock.NewManual()
	reg, err := resilience.NewRegistry(resilience.WithClock(clk))
	require.NoError(t, err)
	hang, err := resilience.Wrap1(reg, "Inventory.Hang",
		func(ctx context.Context, sku string) (int, error) {
			<-ctx.Done() // a dependency that does not answer
			return 0, ctx.Err()
		},
		resilience.Timeout(2*time.Second))
	require.NoError(t, err)

	done := make(chan error, 1)
	go func() {
		_, err := hang(context.Background(), "apple")
		done <- err
	}()
	for clk.PendingTasks() == 0 { // wait until the timeout's timer is armed
		runtime.Gosched()
	}
	clk.Advance(2 * time.Second)
	err = <-done
	assert.True(t, errors.Is(err, timeout.ErrTimeout), "%v", err)
	assert.False(t, errors.Is(err, ratelimit.ErrExceeded))
}

// README:end test-timeout
