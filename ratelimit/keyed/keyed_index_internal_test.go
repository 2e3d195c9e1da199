package keyed

import (
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// entryFor returns key's entry as a call would find it without the shard's lock.
func entryFor(k *Limiter[string], key string) *entry[string] {
	h := k.hash(key)
	return k.shardOf(h).lookup(key, h)
}

// SPEC RL-27: a call that found a cell before its eviction takes nothing from it: the
// cell is dead (by Sweep, or by a new key at the bound), GCRA and the freed slots refuse
// it, a Cancel on it gives nothing back, and the key's next call gets a new cell.
func TestKeyed_RL27_AnEvictedCellGivesNothing(t *testing.T) {
	clk := clock.NewManual()
	k, err := New[string](ratelimit.Permits(2), ratelimit.Period(time.Second), ratelimit.MaxWait(10*time.Second), Bounds(1, 0), ratelimit.WithClock(clk))
	require.NoError(t, err)
	r := k.lim().cur()

	// Swept: found, then made idle and swept.
	require.True(t, k.TryAcquire("a", 1) == nil)
	stale := entryFor(k, "a")
	require.NotNil(t, stale)
	clk.Advance(time.Second)
	require.Equal(t, 1, k.Sweep())
	var d decision
	assert.False(t, gcraCell(&stale.cell, r, 1, int64(clk.Now()), 0, &d), "the swept cell is dead")
	assert.False(t, d.ok)
	assert.Equal(t, int64(rlcore.DeadTAT), stale.slots.TAT.Load(), "and stays dead: nothing was taken")
	assert.Nil(t, entryFor(k, "a"), "the index no longer holds it")
	assert.Equal(t, 2, k.AvailablePermits("a"))

	// Evicted at the bound while busy, with a freed slot: neither the TAT nor the freed
	// slot gives a permit, and a Cancel gives nothing back.
	_, err = k.Reserve("b", 1)
	require.NoError(t, err)
	mid, err := k.Reserve("b", 1)
	require.NoError(t, err)
	last, err := k.Reserve("b", 1)
	require.NoError(t, err)
	mid.Cancel() // a freed slot below the TAT
	stale = entryFor(k, "b")
	require.NotNil(t, stale)
	require.False(t, stale.slots.None(), "b's cell holds a freed slot")
	require.True(t, k.TryAcquire("c", 1) == nil, "c takes b's place")
	assert.False(t, gcraCell(&stale.cell, r, 1, int64(clk.Now()), int64(time.Hour), &d), "b's old cell is dead")
	assert.False(t, d.ok, "its freed slot is not taken")
	require.False(t, stale.slots.None(), "and is still there")
	last.Cancel()
	assert.Equal(t, int64(rlcore.DeadTAT), stale.slots.TAT.Load(), "a Cancel on the dead cell gives nothing back")
	assert.Equal(t, 2, k.AvailablePermits("b"), "b starts afresh")
	assert.Equal(t, 1, k.Len())
}

// SPEC RL-27 (with RL-5): calls that race with Sweep never take a permit from a cell swept
// under them. One permit per Period: a ticker moves the clock one Period at a time (once
// the workers have made a few calls per key at the time before), and each time every
// key's cell becomes idle, which a sweeper evicts while the workers call. A
// key admits at most one call at one clock time: a worker counts each admission under the
// clock time it read before and after the call, when the two are equal (fault: a call that
// found a cell just before its eviction took a permit from it, and the key's new cell
// gave its permit at the same time besides).
func TestKeyed_RL27_NoPermitFromASweptCell(t *testing.T) {
	const keys, workers, ticks = 8, 3, 20_000
	clk := clock.NewManual()
	k, err := New[string](ratelimit.Permits(1), ratelimit.Period(time.Nanosecond), Bounds(keys, 0), ratelimit.WithClock(clk))
	require.NoError(t, err)
	names := make([]string, keys)
	for i := range names {
		names[i] = "k" + strconv.Itoa(i)
	}
	admitted := make([][keys]atomic.Int32, ticks+1) // by clock time (ns), by key
	var done atomic.Bool
	var calls atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for !done.Load() {
			k.Sweep()
			runtime.Gosched()
		}
	})
	for w := range workers {
		wg.Go(func() {
			for n := w; !done.Load(); n++ {
				i := n % keys
				before := clk.Now()
				ok := k.TryAcquire(names[i], 1) == nil
				calls.Add(1)
				if ok && clk.Now() == before {
					admitted[before][i].Add(1)
				}
			}
		})
	}
	for range ticks {
		clk.Advance(time.Nanosecond)
		// Let every key be called a few times at this clock time.
		for target := calls.Load() + 4*keys; calls.Load() < target; {
			runtime.Gosched()
		}
	}
	done.Store(true)
	wg.Wait()
	for at := range admitted {
		for i := range admitted[at] {
			if n := admitted[at][i].Load(); n > 1 {
				t.Errorf("key %s admitted %d calls at %dns", names[i], n, at)
			}
		}
	}
}

// SPEC RL-27: under a churn of new keys at the bound, each shard's index stays small, its
// entries stay in Robin Hood order (so that a lookup for a key that is not there stops
// early), and every key held is found with its state.
func TestKeyed_RL27_IndexStaysInOrderUnderChurn(t *testing.T) {
	clk := clock.NewManual()
	const maxKeys = 2048
	k, err := New[string](ratelimit.Permits(2), ratelimit.Period(time.Hour), Bounds(maxKeys, 0), ratelimit.WithClock(clk))
	require.NoError(t, err)
	for i := range 50 * maxKeys {
		require.True(t, k.TryAcquire("churn-"+strconv.Itoa(i), 1) == nil)
		if i%1000 == 999 {
			clk.Advance(time.Hour) // some idle cells, for Sweep
			k.Sweep()
		}
	}
	held := 0
	for i := range k.shards {
		s := &k.shards[i]
		ix := s.index.Load()
		assert.LessOrEqual(t, s.live, len(ix.slots)/8*7, "shard %d", i)
		assert.LessOrEqual(t, len(ix.slots), 4*indexSize(maxKeys/len(k.shards)), "shard %d", i)
		live := 0
		for j := range ix.slots {
			e := ix.slots[j].e.Load()
			if e == nil {
				continue
			}
			live++
			h := ix.slots[j].hash.Load()
			require.Equal(t, k.hash(e.key), h, "slot %d holds its key's hash", j)
			// Robin Hood order: the entry before is at least as far from its home, less one.
			prev := (uint64(j) - 1) & ix.mask
			if pe := ix.slots[prev].e.Load(); pe != nil {
				dist := (uint64(j) - h) & ix.mask
				pdist := (prev - ix.slots[prev].hash.Load()) & ix.mask
				require.LessOrEqual(t, dist, pdist+1, "shard %d slot %d", i, j)
			} else {
				require.Zero(t, (uint64(j)-h)&ix.mask, "after an empty slot, an entry is at its home")
			}
			require.Same(t, e, s.lookup(e.key, h), "%s is found", e.key)
			assert.Equal(t, 1, k.AvailablePermits(e.key), "%s keeps its state", e.key)
		}
		require.Equal(t, s.live, live, "shard %d counts its entries", i)
		held += live
	}
	assert.Equal(t, k.Len(), held)
	assert.Nil(t, k.shardOf(k.hash("absent")).lookup("absent", k.hash("absent")))
}

// SPEC RL-27: AvailablePermits of a held key is its own state while new keys churn
// through its shard: a lookup that misses the key while a writer moves entries looks
// again under the lock (fault: the miss was taken for a key without a cell, and a key
// that had spent its quota was reported with a full burst).
func TestKeyed_RL27_AvailablePermitsOfAHeldKeyDuringChurn(t *testing.T) {
	clk := clock.NewManual()
	k, err := New[string](ratelimit.Permits(5), ratelimit.Period(time.Hour), Bounds(30, 0), ratelimit.WithClock(clk)) // one shard
	require.NoError(t, err)
	for range 5 {
		require.True(t, k.TryAcquire("hot", 1) == nil)
	}
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; !done.Load(); i++ {
			_ = k.TryAcquire("churn-"+strconv.Itoa(i), 1)
		}
	})
	for range 200_000 {
		if n := k.AvailablePermits("hot"); n != 0 {
			t.Errorf("AvailablePermits(hot) = %d, want 0", n)
			break
		}
	}
	done.Store(true)
	wg.Wait()
	require.False(t, k.TryAcquire("hot", 1) == nil, "hot kept its cell throughout")
}

// The string hash mixes a key's length in by a second round: keys of different lengths
// whose bytes differ by the lengths' difference hash apart (fault: the length was xored
// into the first word only, which those bytes cancel, whatever the seed).
func TestKeyed_StrHashSeparatesLengths(t *testing.T) {
	for _, seed := range []uint64{0, 1, 0x9e3779b97f4a7c15, 1 << 63} {
		for _, p := range [][2]string{{"A", "AAC"}, {"aaaaaaaa", "`aaaaaaaa"}, {"", "\x00"}} {
			assert.NotEqual(t, strShardHash(p[0], seed), strShardHash(p[1], seed), "%q and %q, seed %#x", p[0], p[1], seed)
		}
	}
}
