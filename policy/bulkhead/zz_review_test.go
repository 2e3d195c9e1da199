package bulkhead

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Concurrent Acquire/Release (with waiting) while maxConcurrent flips between values:
// at the end every slot is back, nobody waits, and in flight never exceeded the highest limit.
func TestZZ_BulkheadReconfigureUnderLoad(t *testing.T) {
	for round := 0; round < 20; round++ {
		b, err := New(MaxConcurrent(3), MaxWait(time.Hour))
		require.NoError(t, err)
		var inFlight, peak atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := 0; g < 16; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 300; i++ {
					ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
					if b.Acquire(ctx) == nil {
						n := inFlight.Add(1)
						for {
							p := peak.Load()
							if n <= p || peak.CompareAndSwap(p, n) {
								break
							}
						}
						inFlight.Add(-1)
						b.Release()
					}
					cancel()
				}
			}()
		}
		var rw sync.WaitGroup
		rw.Add(1)
		go func() {
			defer rw.Done()
			vals := []int{1, 5, 2, 7, 3}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				require.NoError(t, b.Reconfigure(Config{MaxConcurrent: vals[i%len(vals)], MaxWait: time.Hour}))
			}
		}()
		wg.Wait()
		close(stop)
		rw.Wait()
		require.NoError(t, b.Reconfigure(Config{MaxConcurrent: 4, MaxWait: time.Hour}))
		require.Equal(t, int64(4), b.free.Load(), "round %d: free", round)
		require.Equal(t, 4, b.AvailableSlots())
		require.Equal(t, 0, b.Waiting())
		require.LessOrEqual(t, peak.Load(), int64(7))
	}
}

// Lowering to 1 while 3 in flight: new calls rejected until in flight < 1.
func TestZZ_LowerThenRelease(t *testing.T) {
	b, _ := New(MaxConcurrent(3))
	for i := 0; i < 3; i++ {
		require.True(t, b.TryAcquire())
	}
	require.NoError(t, b.Reconfigure(Config{MaxConcurrent: 1}))
	b.Release()
	require.False(t, b.TryAcquire())
	b.Release()
	require.False(t, b.TryAcquire())
	b.Release()
	require.True(t, b.TryAcquire())
	require.False(t, b.TryAcquire())
	require.Equal(t, 0, b.AvailableSlots())
	b.Release()
	require.Equal(t, 1, b.AvailableSlots())
}
