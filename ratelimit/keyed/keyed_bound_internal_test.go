package keyed

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// cellsHeld counts the cells in k's indexes with every shard locked at once (in order), and
// returns it with the count of places at that instant.
func cellsHeld[K comparable](k *Limiter[K]) (cells int, places int64) {
	for i := range k.shards {
		k.shards[i].mu.Lock()
	}
	for i := range k.shards {
		cells += k.shards[i].live
	}
	places = k.count.Load()
	for i := range k.shards {
		k.shards[i].mu.Unlock()
	}
	return cells, places
}

// SPEC RL-20: the indexes never hold more than MaxKeys cells, at any instant, while many
// goroutines bring new keys (which evict from their own shard or from others, one lock at
// a time) and sweep; the count of places is never below the cells held, and equals it
// once they stop.
func TestKeyed_RL20_NeverMoreCellsThanMaxKeys(t *testing.T) {
	for _, maxKeys := range []int{1, 16, 100, 2048} {
		t.Run(strconv.Itoa(maxKeys), func(t *testing.T) {
			clk := clock.NewManual()
			k, err := New[int](ratelimit.Permits(2), ratelimit.Period(time.Hour), Bounds(maxKeys, 0), ratelimit.WithClock(clk))
			require.NoError(t, err)
			var stop atomic.Bool
			var wg sync.WaitGroup
			for w := range 6 {
				wg.Go(func() {
					for i := 0; !stop.Load(); i++ {
						_ = k.TryAcquire(w<<20|i%(3*maxKeys+5), 1)
						if i%1000 == 999 {
							k.Sweep()
						}
					}
				})
			}
			checks, over := 0, 0
			for range 300 {
				cells, places := cellsHeld(k)
				checks++
				if cells > maxKeys || int64(cells) > places || places > int64(maxKeys) {
					over++
					t.Errorf("%d cells, %d places, MaxKeys %d", cells, places, maxKeys)
				}
				clk.Advance(time.Minute)
			}
			stop.Store(true)
			wg.Wait()
			cells, places := cellsHeld(k)
			assert.Equal(t, int64(cells), places, "at rest, one place per cell")
			assert.LessOrEqual(t, cells, maxKeys)
			assert.Zero(t, over, "of %d checks", checks)
		})
	}
}

// RL-21: keys spread over the shards, also long keys that differ only in their middle (a
// fixed prefix and suffix around an id): no shard holds much more than its share.
func TestKeyed_RL21_KeysSpreadOverTheShards(t *testing.T) {
	for _, format := range []string{"c%d", "tenant-acme|user-%d|GET /v1/orders"} {
		k, err := New[string](ratelimit.Permits(2), ratelimit.Period(time.Hour), Bounds(100_000, 0), ratelimit.WithClock(clock.NewManual()))
		require.NoError(t, err)
		for i := range 100_000 {
			_ = k.TryAcquire(fmt.Sprintf(format, i), 1)
		}
		most := 0
		for i := range k.shards {
			most = max(most, k.shards[i].live)
		}
		share := 100_000 / len(k.shards)
		assert.LessOrEqual(t, most, share+share/4, "%s: the fullest shard holds %d keys, a share is %d", format, most, share)
	}
}
