package keyed_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
)

// MaxKeys is one bound over all the limiter's keys, however they hash: up to MaxKeys live
// keys are all held, each with its own state, and one more key evicts exactly one
// (fault: each shard held MaxKeys/shards keys, so a shard filled before the bound and
// evicted live keys, which started afresh).
func TestKeyed_RL20_MaxKeysLiveKeysAllHeld(t *testing.T) {
	for _, n := range []int{10_000, 300, 17, 1} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			clk := clock.NewManual()
			// Two permits an hour: after one call, each key has one left and is not idle.
			k := newKeyed[string](t, clk, ratelimit.Permits(2), ratelimit.Period(time.Hour), keyed.Bounds(n, 0))
			keys := make([]string, n)
			for i := range keys {
				keys[i] = "client-" + strconv.Itoa(i)
				require.True(t, k.TryAcquire(keys[i], 1) == nil)
			}
			require.Equal(t, n, k.Len())
			for _, key := range keys {
				require.Equal(t, 1, keyed.AvailablePermits(k, key), "%s keeps its own state: no key started afresh", key)
			}

			require.True(t, k.TryAcquire("one-more", 1) == nil)
			assert.Equal(t, n, k.Len(), "the bound holds")
			afresh := 0
			for _, key := range keys {
				if keyed.AvailablePermits(k, key) == 2 {
					afresh++
				}
			}
			assert.Equal(t, 1, afresh, "one more key evicted exactly one")
			assert.Equal(t, 1, keyed.AvailablePermits(k, "one-more"))
		})
	}
}

// The bound is exact under concurrency: goroutines adding new keys, calling held ones and
// sweeping never make the limiter hold more than MaxKeys cells, and, once they stop, Len
// counts exactly the keys held.
func TestKeyed_RL20_MaxKeysIsExactUnderConcurrency(t *testing.T) {
	for _, maxKeys := range []int{1, 40, 1000} {
		t.Run(strconv.Itoa(maxKeys), func(t *testing.T) {
			clk := clock.NewManual()
			k := newKeyed[string](t, clk, ratelimit.Permits(3), ratelimit.Period(time.Hour), keyed.Bounds(maxKeys, 0))
			const workers, calls = 8, 3000
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for i := range calls {
						key := "w" + strconv.Itoa(w) + "-" + strconv.Itoa(i%(maxKeys+7))
						_ = k.TryAcquire(key, 1)
						if l := k.Len(); l > maxKeys {
							t.Errorf("Len %d > MaxKeys %d", l, maxKeys)
							return
						}
						if i%500 == 0 {
							k.Sweep()
						}
					}
				})
			}
			wg.Go(func() {
				for range 200 {
					clk.Advance(time.Minute) // some cells become idle along the way
				}
			})
			wg.Wait()
			held := 0
			for w := range workers {
				for i := range maxKeys + 7 {
					if keyed.AvailablePermits(k, "w"+strconv.Itoa(w)+"-"+strconv.Itoa(i)) < 3 {
						held++ // a key not idle has a cell
					}
				}
			}
			assert.LessOrEqual(t, k.Len(), maxKeys)
			assert.LessOrEqual(t, held, k.Len(), "Len counts every busy key held")
			clk.Advance(2 * time.Hour)
			assert.Equal(t, k.Len(), k.Sweep(), "once quiet, Len is exactly the cells held")
			assert.Zero(t, k.Len())
		})
	}
}

// An idle client that comes back finds its cell: no allocation (fault: idle cells were
// swept as new keys came, and the client's next call made a cell and a copy of its key).
func TestKeyed_RL21_IdleKeyComingBackAllocatesNothing(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[string](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Millisecond), keyed.Bounds(1000, 0))
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "203.0.113." + strconv.Itoa(i)
		require.True(t, k.TryAcquire(keys[i], 1) == nil)
	}
	allocs := testing.AllocsPerRun(20, func() {
		clk.Advance(time.Millisecond) // every key idle
		for _, key := range keys {
			if k.TryAcquire(key, 1) != nil {
				t.Fatal("an idle key was refused")
			}
		}
	})
	assert.Zero(t, allocs)
	assert.Equal(t, 1000, k.Len())
	clk.Advance(time.Millisecond)
	assert.Zero(t, testing.AllocsPerRun(100, func() { k.Decide(context.Background(), keys[7]) }), "Decide on an idle key")
}

// A reservation of a key that was evicted before it was idle gives its permit back to no
// one when canceled: not to the key that took its place, nor to the key, which started
// afresh.
func TestKeyed_RL20_CancelAfterEvictionGivesNothingToAnotherKey(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[string](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Hour), ratelimit.MaxWait(2*time.Hour),
		keyed.Bounds(1, 0))
	_, err := k.Reserve("a", 1)
	require.NoError(t, err)
	r, err := k.Reserve("a", 1)
	require.NoError(t, err)
	require.Equal(t, time.Hour, r.Delay(), "a reservation still to come")

	require.True(t, k.TryAcquire("b", 1) == nil, "b takes a's place")
	require.Equal(t, 1, k.Len())
	require.Equal(t, 0, keyed.AvailablePermits(k, "b"))
	r.Cancel()
	assert.Equal(t, 0, keyed.AvailablePermits(k, "b"), "b got nothing from a's cancel")
	assert.False(t, k.TryAcquire("b", 1) == nil)
	assert.Equal(t, 1, keyed.AvailablePermits(k, "a"), "a, evicted, starts afresh")
	assert.True(t, k.TryAcquire("a", 1) == nil)
	assert.Equal(t, 0, keyed.AvailablePermits(k, "a"), "and a's cancel gave its new cell nothing either")
}

// RL-21: the memory per key held at the bound does not grow with MaxKeys (an index doubles
// as it grows, so its memory per entry swings between its fill levels; each shard holds
// about 768 keys at the bound, three quarters of 1,024 slots).
func TestKeyed_RL21_MemoryPerKeyDoesNotGrowWithMaxKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("builds limiters of 50,000 and 400,000 keys")
	}
	perKey := func(n int) float64 {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("client-%d", i)
		}
		before := heapInUse()
		k, err := keyed.New[string](ratelimit.Permits(10), ratelimit.Period(time.Hour), keyed.Bounds(n, 0))
		require.NoError(t, err)
		for _, key := range keys {
			require.True(t, k.TryAcquire(key, 1) == nil)
		}
		require.Equal(t, n, k.Len())
		b := float64(heapInUse()-before) / float64(n)
		runtime.KeepAlive(k)
		runtime.KeepAlive(keys)
		return b
	}
	small, large := perKey(50_000), perKey(400_000)
	t.Logf("bytes per key: %.1f at 50,000 keys, %.1f at 400,000", small, large)
	assert.LessOrEqual(t, large, small*1.1, "the memory per key at the bound does not grow with MaxKeys")
}
