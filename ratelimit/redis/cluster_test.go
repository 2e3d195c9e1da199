package redis_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/redistest"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/internal/gcra"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	rlredis "github.com/resilience4go/resilience4go/ratelimit/redis"
)

// Redis Cluster: a node that fails takes only its own keys to the failure policy, slots
// that move lose no quota, and a whole cluster down leaves each instance its fair share.
// Each test runs a 3-node cluster of its own (redistest.StartCluster), since it stops nodes
// or moves slots.

// clusterTimeout bounds each call to Redis in these tests: generous, so that a healthy
// node slowed down by a loaded machine (and the race detector) is never taken for a failed
// one; only a stopped node's calls reach it. (1s was once reached by a healthy node's
// call on a machine loaded far beyond its two cores.)
const clusterTimeout = 2 * time.Second

// ownCluster returns a started cluster of t's own and a quickClient of it.
func ownCluster(t *testing.T) (*redistest.Cluster, *goredis.ClusterClient) {
	t.Helper()
	cl := redistest.StartCluster(t)
	c := quickClusterClient(t, cl.Addrs())
	requireServer(t, c)
	return cl, c
}

// quickClusterClient returns a client of the cluster at addrs whose own timeouts are
// short, so that its background slot-map reloads never outlive the test by long; closed
// when t ends.
func quickClusterClient(t *testing.T, addrs []string) *goredis.ClusterClient {
	t.Helper()
	c := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true,
		DialTimeout: clusterTimeout, ReadTimeout: clusterTimeout, WriteTimeout: clusterTimeout})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// nodeOf returns the address of the master that owns key's slot in c's slot map.
func nodeOf(t *testing.T, c *goredis.ClusterClient, key string) string {
	t.Helper()
	n, err := c.MasterForKey(context.Background(), key)
	require.NoError(t, err)
	return n.Options().Addr
}

// SPEC RL-18: one node of three stopped (SIGSTOP), with FailClosed: the keys on the two
// healthy nodes are all decided by Redis, each admitting exactly its burst of 5 of 7
// calls; the keys on the stopped node are refused, as FailClosed says, and only one call
// waits for the stopped node (the probe interval is on a manual clock that does not
// move). One RateLimiterBackendFailed names the stopped node. When the node resumes, its
// keys are back on Redis at the first call after one probe interval, with one
// RateLimiterBackendRecovered for that node. No goroutine is left once the client is
// closed. (Fault: Redis's health was one flag for the whole backend, so one stopped node
// sent 297 of 300 keys to the failure policy.)
func TestRL18_OneNodeStoppedOnlyItsKeysFail(t *testing.T) {
	verifyNoLeaks(t)
	cl, c := ownCluster(t)
	const probe = time.Second
	b, err := rlredis.New(c, rlredis.Prefix(rlredis.UniquePrefix(t)), rlredis.Timeout(clusterTimeout),
		rlredis.OnFailure(backend.Refused), rlredis.ProbeInterval(probe))
	require.NoError(t, err)
	clk := clock.NewManual()
	var log events
	k, err := keyed.New[string](ratelimit.Name("api"), ratelimit.Permits(5), ratelimit.Period(100*time.Second),
		ratelimit.WithClock(clk), ratelimit.WithBackend(b), ratelimit.OnEvent(log.add))
	require.NoError(t, err)

	stopped := cl.Addrs()[1]
	byNode := map[string][]string{}
	for i := range 300 {
		key := fmt.Sprintf("client-%d", i)
		node := nodeOf(t, c, rlredis.Key(b, "api:"+key))
		byNode[node] = append(byNode[node], key)
	}
	require.Len(t, byNode, 3, "the keys spread over the three nodes")
	t.Logf("keys per node: %d, %d, %d", len(byNode[cl.Addrs()[0]]), len(byNode[cl.Addrs()[1]]), len(byNode[cl.Addrs()[2]]))

	cl.Node(1).Pause()
	admitted := map[string]int{}
	for _, keys := range byNode {
		for _, key := range keys {
			for range 7 {
				if k.TryAcquire(key, 1) == nil {
					admitted[key]++
				}
			}
		}
	}
	for node, keys := range byNode {
		for _, key := range keys {
			if node == stopped {
				assert.Zero(t, admitted[key], "%s on the stopped node: FailClosed", key)
			} else {
				assert.Equal(t, 5, admitted[key], "%s on the healthy node %s: its exact quota", key, node)
			}
		}
	}
	failed := log.byKind(backend.EventFailed)
	require.Len(t, failed, 1, "one failure, of one node")
	assert.Equal(t, stopped, failed[0].Attr("node").String())
	assert.Equal(t, "api", failed[0].Instance, "the keyed limiter's id")
	assert.Contains(t, byNode[stopped], failed[0].Key, "the key whose call found the node down")
	assert.ErrorIs(t, failed[0].Err, context.DeadlineExceeded)
	assert.Empty(t, log.byKind(backend.EventRecovered))

	// The node resumes: within one probe interval its keys are on Redis again.
	cl.Node(1).Resume()
	key := byNode[stopped][1] // not the first, whose timed-out call the node may run on resuming
	assert.False(t, k.TryAcquire(key, 1) == nil, "no probe is due yet: FailClosed")
	clk.Advance(probe)
	assert.True(t, k.TryAcquire(key, 1) == nil, "the probe reaches the node")
	recovered := log.byKind(backend.EventRecovered)
	require.Len(t, recovered, 1)
	assert.Equal(t, stopped, recovered[0].Attr("node").String())
	for _, key := range byNode[stopped][1:] {
		n := 0
		for range 7 {
			if k.TryAcquire(key, 1) == nil {
				n++
			}
		}
		if key == byNode[stopped][1] {
			n++ // the probe's permit
		}
		assert.Equal(t, 5, n, "%s: its exact quota, from Redis", key)
		assert.ErrorIs(t, k.TryAcquire(key, 1), ratelimit.ErrExceeded, "%s: none left in Redis's state", key)
	}
	assert.Len(t, log.byKind(backend.EventFailed), 1, "no other failure")
	assert.Len(t, log.byKind(backend.EventRecovered), 1, "one recovery")
}

// SPEC RL-18, RL-5: 3,000 slots move from one node to another (with their keys) while 8
// goroutines call 2,000 keys of a keyed limiter for 5s: no call fails over (no
// RateLimiterBackendFailed), and no key admits more than its bound, Permits +
// floor(elapsed/T).
func TestRL18_ReshardingWhileCallsRun(t *testing.T) {
	verifyNoLeaks(t)
	cl, c := ownCluster(t)
	b, err := rlredis.New(c, rlredis.Prefix(rlredis.UniquePrefix(t)), rlredis.Timeout(2*clusterTimeout))
	require.NoError(t, err)
	var log events
	const (
		permits = 5
		period  = 100 * time.Second // T = 20s: no permit comes back during the run
		keys    = 2000
		run     = 5 * time.Second
	)
	k, err := keyed.New[int](ratelimit.Name("reshard"), ratelimit.Permits(permits), ratelimit.Period(period),
		ratelimit.WithBackend(b), ratelimit.OnEvent(log.add))
	require.NoError(t, err)

	var admitted [keys]atomic.Int64
	var calls atomic.Int64
	start := time.Now()
	stop := start.Add(run)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := g; time.Now().Before(stop); i += 8 {
				key := i % keys
				if k.TryAcquire(key, 1) == nil {
					admitted[key].Add(1)
				}
				calls.Add(1)
			}
		})
	}
	// Move 3,000 of node 0's slots to node 1, in batches spread over the run.
	src, dst := 0, 1
	var moved int
	var moveErr error
	wg.Go(func() {
		const batch = 100
		for first := 0; first < 3000; first += batch {
			slots := make([]int, 0, batch)
			for s := first; s < first+batch; s++ {
				slots = append(slots, s)
			}
			if moveErr = cl.MoveSlots(context.Background(), src, dst, slots); moveErr != nil {
				return
			}
			moved += batch
		}
	})
	wg.Wait()
	elapsed := time.Since(start)
	require.NoError(t, moveErr)
	assert.Equal(t, 3000, moved)
	owner, err := cl.SlotOwner(context.Background(), 2999)
	require.NoError(t, err)
	assert.Equal(t, cl.Addrs()[dst], owner, "the slots moved")

	assert.Empty(t, log.byKind(backend.EventFailed), "no call failed over while slots moved")
	bound := int64(permits) + int64(elapsed/(period/permits))
	var total int64
	for key := range admitted {
		n := admitted[key].Load()
		total += n
		assert.LessOrEqual(t, n, bound, "key %d over %v", key, elapsed)
	}
	t.Logf("%d calls in %v, %d admitted over %d keys (bound %d each), %d slots moved",
		calls.Load(), elapsed, total, keys, bound, moved)
}

// SPEC RL-19: the whole cluster stopped, three instances with Instances(3) and the Local
// policy, each on its own client: over 2s, they admit together no more than the shared
// quota over 2s (Permits + 2s/T) plus three local bursts of Permits/3; here 87, each
// instance its burst of 10 and one permit every 3·T (19 in 2s, T being rounded up), where
// each taking its whole quota would admit 267.
func TestRL19_WholeClusterDownInstancesShareTheQuota(t *testing.T) {
	verifyNoLeaks(t)
	cl, _ := ownCluster(t)
	prefix := rlredis.UniquePrefix(t)
	const (
		permits = 30
		period  = time.Second
		probe   = time.Second
	)
	clk := clock.NewManual()
	var limiters []*ratelimit.Limiter
	var failed atomic.Int64
	for range 3 {
		c := quickClusterClient(t, cl.Addrs())
		b, err := rlredis.New(c, rlredis.Prefix(prefix), rlredis.Timeout(300*time.Millisecond),
			rlredis.ProbeInterval(probe), rlredis.Instances(3))
		require.NoError(t, err)
		l, err := ratelimit.New(ratelimit.Name("quota"), ratelimit.Permits(permits), ratelimit.Period(period),
			ratelimit.WithClock(clk), ratelimit.WithBackend(b), ratelimit.OnEvent(func(e policy.Event) {
				if e.Kind == backend.EventFailed {
					failed.Add(1)
				}
			}))
		require.NoError(t, err)
		require.Equal(t, permits, l.Snapshot().AvailablePermits, "on Redis: the whole shared burst")
		limiters = append(limiters, l)
	}
	for i := range 3 {
		cl.Node(i).Pause()
	}
	t.Cleanup(func() {
		for i := range 3 {
			cl.Node(i).Resume()
		}
	})

	total := 0
	for step := 0; ; step++ {
		for _, l := range limiters {
			for l.TryAcquire() {
				total++
			}
		}
		if step == 200 {
			break
		}
		clk.Advance(10 * time.Millisecond) // 200 steps: 2s
	}
	assert.Equal(t, int64(3), failed.Load(), "each instance found the cluster down")
	T := gcra.Interval(permits, period) // 33.333334ms, rounded up
	quota := permits + int(2*time.Second/T)
	localBurst := permits / 3
	assert.LessOrEqual(t, total, quota+3*localBurst, "RL-19's bound")
	assert.Equal(t, 3*(localBurst+int(2*time.Second/(3*T))), total,
		"each instance: its local burst, then one permit every 3·T")
	t.Logf("admitted %d over 2s with the cluster down; shared quota %d, bound %d", total, quota, quota+3*localBurst)
}

// SPEC RL-18: a cluster unreachable from the start, before the client has a slot map: the
// keys' node cannot be named, so the cluster as a whole ("") is down. Only the first call
// waits for it, up to the timeout; the others take the failure policy at once, without
// looking the slot map up again. When the cluster answers, at the next probe, the one
// RateLimiterBackendRecovered names "" too. (Fault: the node lookup tried to load the slot
// map, so every call waited the timeout, and the first one twice.)
func TestRL18_ClusterUnreachableFromTheStart(t *testing.T) {
	verifyNoLeaks(t)
	cl := redistest.StartCluster(t)
	for i := range 3 {
		cl.Node(i).Pause()
	}
	c := quickClusterClient(t, cl.Addrs())
	const probe = time.Second
	b, err := rlredis.New(c, rlredis.Prefix(rlredis.UniquePrefix(t)), rlredis.Timeout(clusterTimeout),
		rlredis.OnFailure(backend.Refused), rlredis.ProbeInterval(probe))
	require.NoError(t, err)
	clk := clock.NewManual()
	var log events
	l := limiter(t, b, "nomap", ratelimit.Permits(5), ratelimit.Period(100*time.Second),
		ratelimit.WithClock(clk), ratelimit.OnEvent(log.add))

	var ok bool
	d := timed(func() { ok = l.TryAcquire() })
	assert.False(t, ok, "FailClosed")
	assert.Less(t, d, clusterTimeout+clusterTimeout*3/4, "the first call waits about the timeout, once")
	for i := range 5 {
		d := timed(func() { ok = l.TryAcquire() })
		assert.False(t, ok)
		assert.Less(t, d, clusterTimeout/2, "call %d: the cluster is known down, no probe due", i+2)
	}
	failed := log.byKind(backend.EventFailed)
	require.Len(t, failed, 1)
	assert.Nil(t, failed[0].Attr("node").Any(), "no slot map: the cluster as a whole, no node")

	for i := range 3 {
		cl.Node(i).Resume()
	}
	clk.Advance(probe)
	assert.True(t, l.TryAcquire(), "the probe reaches the cluster, and loads the slot map")
	recovered := log.byKind(backend.EventRecovered)
	require.Len(t, recovered, 1)
	assert.Nil(t, recovered[0].Attr("node").Any())
	assert.Equal(t, 4, l.Snapshot().AvailablePermits, "on Redis again: 5, less the probe's permit (the calls before never reached a node)")
}
