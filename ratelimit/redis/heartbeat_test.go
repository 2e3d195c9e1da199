package redis_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/redistest"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/internal/gcra"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	rlredis "github.com/resilience4go/resilience4go/ratelimit/redis"
)

// The live fair share: instances announce themselves with a heartbeat, and each takes
// 1/N of the quota while Redis fails, N being the live instances it last saw.

const (
	// hbTimeout bounds each round trip of these tests: generous for a loaded machine.
	hbTimeout = 250 * time.Millisecond
	// hbExpiry is the heartbeat's expiry: one beat every 250ms, each entry living 750ms.
	hbExpiry = time.Second
)

// heartbeatBackend returns a backend on c with a heartbeat, closed when t ends (before
// the client, which t closes after).
func heartbeatBackend(t *testing.T, c goredis.Scripter, prefix string, opts ...rlredis.Option) *rlredis.Backend {
	t.Helper()
	b, err := rlredis.New(c, append([]rlredis.Option{rlredis.Prefix(prefix), rlredis.Timeout(hbTimeout),
		rlredis.Heartbeat(hbExpiry)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// sees waits, at most within, until every backend of bs has n as its share, and returns how long
// that took; it fails t otherwise.
func sees(t *testing.T, bs []*rlredis.Backend, n int, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	require.Eventually(t, func() bool {
		for _, b := range bs {
			if b.LocalShare() != n {
				return false
			}
		}
		return true
	}, within, 5*time.Millisecond, "every instance sees %d", n)
	return time.Since(start)
}

// SPEC RL-36: Heartbeat's input: negative is R4C-ATR-004, shorter than 4·Timeout or
// 4ms R4C-ATR-007, 0 is off (no goroutine: nothing to Close). Before any beat is
// answered, the share is Instances, the floor.
func TestRL36_HeartbeatOption(t *testing.T) {
	c := goredis.NewClient(&goredis.Options{Addr: redistest.ClosedAddr(t), ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	for _, tc := range []struct {
		opts []rlredis.Option
		code string
	}{
		{[]rlredis.Option{rlredis.Heartbeat(-time.Second)}, r4c.NegativeDuration},
		{[]rlredis.Option{rlredis.Heartbeat(199 * time.Millisecond)}, r4c.OutOfRange}, // Timeout 50ms by default
		{[]rlredis.Option{rlredis.Timeout(time.Microsecond), rlredis.Heartbeat(3 * time.Millisecond)}, r4c.OutOfRange},
	} {
		_, err := rlredis.New(c, tc.opts...)
		assert.Equal(t, tc.code, r4c.CodeOf(err), "%v", err)
	}
	b, err := rlredis.New(c, rlredis.Heartbeat(0), rlredis.Instances(3))
	require.NoError(t, err)
	assert.Equal(t, 3, b.LocalShare())
	require.NoError(t, b.Close())

	verifyNoLeaks(t)
	b, err = rlredis.New(c, rlredis.Heartbeat(200*time.Millisecond), rlredis.Instances(5))
	require.NoError(t, err)
	assert.Equal(t, 5, b.LocalShare(), "no beat answered (no server): the floor")
	require.NoError(t, b.Close())
	require.NoError(t, b.Close(), "twice")
	b, err = rlredis.New(c, rlredis.Heartbeat(time.Second), rlredis.OnFailure(backend.Refused), rlredis.Instances(5))
	require.NoError(t, err)
	assert.Equal(t, 1, b.LocalShare(), "no share with another failure policy, and no goroutine")
}

// SPEC RL-36: N follows the instances that come and go: 4 backends with a heartbeat,
// each on its own client, one prefix: each sees 4 within one beat (expiry/4); 2 Closed:
// the others see 2 at their next beat; an instance that stops without Close (an entry
// written as a crashed one left it) is counted until its entry expires, then dropped.
// Once all are closed, the key is gone. On a server and on a cluster (one key, one slot).
func TestRL36_InstancesComeAndGo(t *testing.T) {
	onEach(t, func(t *testing.T) {
		prefix := rlredis.UniquePrefix(t)
		var bs []*rlredis.Backend
		for range 4 {
			c := testClient(t)
			requireServer(t, c)
			bs = append(bs, heartbeatBackend(t, c, prefix))
		}
		took := sees(t, bs, 4, hbExpiry+slack)
		t.Logf("4 seen by each within %v (a beat every %v)", took, hbExpiry/4)

		require.NoError(t, bs[0].Close())
		require.NoError(t, bs[1].Close())
		took = sees(t, bs[2:], 2, hbExpiry+slack)
		t.Logf("2 closed: 2 seen by the others within %v", took)

		// A crashed instance's entry, as its last beat left it: it lives 3/4 of the expiry.
		admin := testClient(t)
		key := rlredis.InstancesKey(bs[2])
		now, err := admin.Time(context.Background()).Result()
		require.NoError(t, err)
		crashed := time.Now()
		require.NoError(t, admin.ZAdd(context.Background(), key,
			goredis.Z{Score: float64(now.Add(hbExpiry * 3 / 4).UnixMilli()), Member: "crashed"}).Err())
		sees(t, bs[2:], 3, hbExpiry+slack)
		sees(t, bs[2:], 2, hbExpiry+slack)
		t.Logf("a crashed instance counted, then dropped by each %v after its last beat (expiry %v)",
			time.Since(crashed), hbExpiry)

		require.NoError(t, bs[2].Close())
		require.NoError(t, bs[3].Close())
		assert.Zero(t, admin.Exists(context.Background(), key).Val(), "no instance left, no key")
	})
}

// outageFleet is the instances of one test: each a backend with a heartbeat on a client
// of its own, a limiter and a keyed limiter on it, all on one manual clock.
type outageFleet struct {
	bs    []*rlredis.Backend
	ls    []*ratelimit.Limiter
	ks    []*keyed.Limiter[string]
	clk   *clock.Manual
	alive []bool
}

func newOutageFleet(t *testing.T, client func() goredis.Scripter, n, permits int) *outageFleet {
	t.Helper()
	f := &outageFleet{clk: clock.NewManual()}
	prefix := rlredis.UniquePrefix(t)
	for range n {
		// The probe interval, on the manual clock, is longer than the test: only the first
		// call of each backend waits for the paused server.
		b := heartbeatBackend(t, client(), prefix, rlredis.ProbeInterval(time.Hour))
		opts := []ratelimit.Option{ratelimit.Name("fleet"), ratelimit.Permits(permits), ratelimit.Period(time.Second),
			ratelimit.WithClock(f.clk), ratelimit.WithBackend(b)}
		l, err := ratelimit.New(opts...)
		require.NoError(t, err)
		k, err := keyed.New[string](opts...)
		require.NoError(t, err)
		f.bs, f.ls, f.ks, f.alive = append(f.bs, b), append(f.ls, l), append(f.ks, k), append(f.alive, true)
	}
	return f
}

// run calls every live instance's limiter, and the key "k" of its keyed limiter, until
// they refuse, every 10ms of the manual clock for d, and returns the permits admitted by
// each kind, over all the instances.
func (f *outageFleet) run(d time.Duration) (limiters, keys int) {
	for step := time.Duration(0); ; step += 10 * time.Millisecond {
		for i, l := range f.ls {
			if !f.alive[i] {
				continue
			}
			for l.TryAcquire() {
				limiters++
			}
			for f.ks[i].TryAcquire("k", 1) == nil {
				keys++
			}
		}
		if step >= d {
			return limiters, keys
		}
		f.clk.Advance(10 * time.Millisecond)
	}
}

// SPEC RL-36, RL-35: 4 instances, Redis stopped (SIGSTOP) for 10s of the limiters'
// clock: each takes 1/4 of the quota, N being the 4 it last saw, so that together they
// admit exactly the quota over the 10s (within one local burst each), for a Limiter and
// for a key of a keyed limiter. 2 of them stop during the outage: the other 2 cannot
// learn it, and keep 1/4 each (the fleet under-admits). Redis answers again: the
// limiters are back on the shared quota at their next call, and within one beat the 2
// left see 2; in a second outage they take half of the quota each. On a server of the
// test's own, and on a cluster of its own with every node stopped.
func TestRL36_OutageTakesOneNthOfTheQuota(t *testing.T) {
	t.Run("server", func(t *testing.T) {
		verifyNoLeaks(t)
		srv := redistest.Start(t)
		outageTakesOneNth(t, func() goredis.Scripter { return quickClient(t, srv.Addr()) }, srv.Pause, srv.Resume)
	})
	t.Run("cluster", func(t *testing.T) {
		verifyNoLeaks(t)
		cl, _ := ownCluster(t)
		all := func(f func(*redistest.Node)) func() {
			return func() {
				for i := range 3 {
					f(cl.Node(i))
				}
			}
		}
		outageTakesOneNth(t, func() goredis.Scripter { return quickClusterClient(t, cl.Addrs()) },
			all((*redistest.Node).Pause), all((*redistest.Node).Resume))
	})
}

// outageTakesOneNth is TestRL36_OutageTakesOneNthOfTheQuota on the clients client makes,
// pause stopping Redis and resume letting it run again.
func outageTakesOneNth(t *testing.T, client func() goredis.Scripter, pause, resume func()) {
	const permits = 40
	f := newOutageFleet(t, client, 4, permits)
	sees(t, f.bs, 4, hbExpiry+slack)

	pause()
	t.Cleanup(resume)
	const outage = 10 * time.Second
	lim, keys := f.run(outage)
	T := gcra.Interval(permits, time.Second) // 25ms
	quota := permits + int(outage/T)         // the shared quota over the outage: 440
	each := permits/4 + int(outage/(4*T))    // one instance's share: its burst of 10, then one every 100ms
	t.Logf("4 instances, 10s outage: limiters admitted %d, a key %d; the shared quota %d", lim, keys, quota)
	assert.Equal(t, 4*each, lim, "each instance: 1/4 of the quota")
	assert.Equal(t, 4*each, keys, "each instance's key: 1/4 of the quota")
	assert.LessOrEqual(t, lim, quota+4*(permits/4), "within the quota plus one local burst each")
	assert.GreaterOrEqual(t, float64(lim), 0.9*float64(quota), "within 10% of the quota")

	// 2 stop during the outage: their Close cannot reach Redis; the others keep 4.
	for i := range 2 {
		require.NoError(t, f.bs[i].Close())
		f.alive[i] = false
	}
	lim, _ = f.run(time.Second)
	assert.Equal(t, 4, f.bs[2].LocalShare(), "the N last seen, during the outage")
	assert.Equal(t, 2*(int(time.Second/(4*T))), lim, "the 2 left keep 1/4 each: under the quota")

	resume()
	took := sees(t, f.bs[2:], 2, hbExpiry+slack) // the closed ones' entries, if their Close was lost, expire
	t.Logf("Redis back: the 2 left see 2 within %v", took)
	f.clk.Advance(time.Hour) // the probe is due: the next call of each instance tries Redis
	f.clk.Advance(time.Hour) // and the local schedules are idle
	assert.Equal(t, permits, f.ls[2].Snapshot().AvailablePermits, "the shared quota again")
	start := time.Now()
	lim, _ = f.run(0)
	// On Redis, the server's clock runs while the calls are made: a permit more per T.
	assert.GreaterOrEqual(t, lim, permits, "the 2 left share the quota's burst on Redis")
	assert.LessOrEqual(t, lim, permits+1+int(time.Since(start)/T), "the 2 left share the quota's burst on Redis")

	pause()
	f.clk.Advance(time.Hour)
	lim, _ = f.run(outage)
	assert.Equal(t, 2*(permits/2+int(outage/(2*T))), lim, "a second outage: half of the quota each")
	resume()
}

// SPEC RL-36, RL-18: on a Redis Cluster, the instances key lives on one node; a node that
// holds other slots stopped leaves the heartbeat working (an instance that joins is
// counted, one that leaves dropped), and the limiters whose keys the stopped node holds
// take 1/N of their quota, while those on the healthy nodes stay on Redis.
func TestRL36_ClusterNodeDownLeavesTheHeartbeat(t *testing.T) {
	verifyNoLeaks(t)
	cl, admin := ownCluster(t)
	prefix := rlredis.UniquePrefix(t)
	b0 := heartbeatBackend(t, quickClusterClient(t, cl.Addrs()), prefix, rlredis.ProbeInterval(time.Hour))
	b1 := heartbeatBackend(t, quickClusterClient(t, cl.Addrs()), prefix)
	sees(t, []*rlredis.Backend{b0, b1}, 2, hbExpiry+slack)

	home := nodeOf(t, admin, rlredis.InstancesKey(b0))
	other := -1
	for i := range 3 {
		if cl.Node(i).Addr() != home {
			other = i
			break
		}
	}
	require.GreaterOrEqual(t, other, 0)
	// A limiter name whose key is on the other node, and one whose key is on the home node.
	var onOther, onHome string
	for i := 0; onOther == "" || onHome == ""; i++ {
		name := fmt.Sprintf("q%d", i)
		switch nodeOf(t, admin, rlredis.Key(b0, name)) {
		case cl.Node(other).Addr():
			onOther = either(onOther, name)
		case home:
			onHome = either(onHome, name)
		}
	}
	clk := clock.NewManual()
	limiter := func(name string) *ratelimit.Limiter {
		l, err := ratelimit.New(ratelimit.Name(name), ratelimit.Permits(20), ratelimit.Period(time.Second),
			ratelimit.WithClock(clk), ratelimit.WithBackend(b0))
		require.NoError(t, err)
		return l
	}
	down, up := limiter(onOther), limiter(onHome)

	// The joining instance's client has its slot map already (it would otherwise ask a
	// node at random, maybe the stopped one, for it).
	c2 := quickClusterClient(t, cl.Addrs())
	requireServer(t, c2)
	cl.Node(other).Pause()
	t.Cleanup(cl.Node(other).Resume)
	b2 := heartbeatBackend(t, c2, prefix)
	sees(t, []*rlredis.Backend{b0, b1, b2}, 3, hbExpiry+2*slack)
	require.NoError(t, b1.Close())
	sees(t, []*rlredis.Backend{b0, b2}, 2, hbExpiry+2*slack)

	assert.Equal(t, 10, passes(down), "its node down: 1/2 of the quota, N=2 fresh")
	assert.Equal(t, 20, passes(up), "its node up: the shared quota on Redis")
}

// either returns a when it is set, else b.
func either(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// passes counts the calls that TryAcquire lets through now, up to 100.
func passes(l *ratelimit.Limiter) int {
	n := 0
	for n < 100 && l.TryAcquire() {
		n++
	}
	return n
}
