package redis_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
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
	cb "github.com/resilience4go/resilience4go/policy/circuitbreaker"
	cbredis "github.com/resilience4go/resilience4go/policy/circuitbreaker/redis"
	"github.com/resilience4go/resilience4go/resilience"
)

var errDown = errors.New("dependency down")

// prefixes gives each test run a prefix of its own (a test may run more than once in a
// process, with -count, on the same server).
var (
	prefixes sync.Map // *testing.T → string
	runs     atomic.Int64
)

func prefixOf(t *testing.T) string {
	p, _ := prefixes.LoadOrStore(t, fmt.Sprintf("test:%d:%d:%s:", time.Now().UnixNano(), runs.Add(1), t.Name()))
	return p.(string)
}

// keyOf returns the key of the breaker name of t's fleets.
func keyOf(t *testing.T, name string) string { return "{" + prefixOf(t) + name + "}" }

// instance is one process of the fleet: its client, its fleet and its breaker, on a
// manual clock of its own, with the transitions it published and when (wall clock).
type instance struct {
	client goredis.UniversalClient
	fleet  *cbredis.Fleet
	b      *cb.Breaker
	clk    *clock.Manual

	mu          sync.Mutex
	transitions []transitionSeen
}

type transitionSeen struct {
	from, to string
	fleet    bool
	at       time.Time
}

func (in *instance) listen(e policy.Event) {
	if e.Kind != cb.EventTransition {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.transitions = append(in.transitions, transitionSeen{from: e.Attr("from").String(), to: e.Attr("to").String(),
		fleet: e.Attr("fleet").Kind() == slog.KindBool && e.Attr("fleet").Bool(), at: time.Now()})
}

// seen returns the transitions to state to the instance published.
func (in *instance) seen(to string) []transitionSeen {
	in.mu.Lock()
	defer in.mu.Unlock()
	var out []transitionSeen
	for _, t := range in.transitions {
		if t.to == to {
			out = append(out, t)
		}
	}
	return out
}

func (in *instance) state() string { return in.b.Snapshot().State }

// newClient returns a client on the single server addr, or a cluster client on addrs.
func newClient(t *testing.T, addrs []string, cluster bool) goredis.UniversalClient {
	var c goredis.UniversalClient
	if cluster {
		c = goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true,
			MaxRedirects: 3, DialTimeout: 200 * time.Millisecond})
	} else {
		c = goredis.NewClient(&goredis.Options{Addr: addrs[0], ContextTimeoutEnabled: true,
			DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// newFleet builds n instances of the breaker named name, each on a client of its own.
func newFleet(t *testing.T, addrs []string, cluster bool, n int, name string, opts ...cb.Option) []*instance {
	out := make([]*instance, n)
	for i := range out {
		in := &instance{client: newClient(t, addrs, cluster), clk: clock.NewManual()}
		f, err := cbredis.New(in.client, cbredis.Prefix(prefixOf(t)), cbredis.Timeout(time.Second))
		require.NoError(t, err)
		t.Cleanup(func() { _ = f.Close() })
		in.fleet = f
		all := append([]cb.Option{cb.Name(name), cb.WithFleet(f), cb.WithClock(in.clk), cb.OnEvent(in.listen),
			cb.SlidingWindowSize(2), cb.MinimumCalls(2), cb.WaitInOpen(time.Minute), cb.PermittedInHalfOpen(3)}, opts...)
		in.b, err = cb.New(all...)
		require.NoError(t, err)
		out[i] = in
	}
	// Wait until every member has subscribed and read the key: a transition it does not
	// follow would be a test of a missed subscription, not of the fleet.
	waitSubscribed(t, out[0].client, name, n)
	return out
}

// waitSubscribed waits until the name's channel has n subscribers (on the node of its
// slot, for a cluster).
func waitSubscribed(t *testing.T, c goredis.UniversalClient, name string, n int) {
	channel := keyOf(t, name) + ":t"
	require.Eventually(t, func() bool {
		var got int64
		if cc, ok := c.(*goredis.ClusterClient); ok {
			nodes, err := cc.MasterForKey(context.Background(), channel)
			if err != nil {
				return false
			}
			m, err := nodes.PubSubShardNumSub(context.Background(), channel).Result()
			if err != nil {
				return false
			}
			got = m[channel]
		} else {
			m, err := c.PubSubShardNumSub(context.Background(), channel).Result()
			if err != nil {
				return false
			}
			got = m[channel]
		}
		return got == int64(n)
	}, 5*time.Second, 5*time.Millisecond)
}

func call(b *cb.Breaker, fn func(context.Context) (int, error)) error {
	_, err := cb.NewPolicy[int](b).Decorate(fn)(context.Background())
	return err
}

func fail(context.Context) (int, error)    { return 0, errDown }
func succeed(context.Context) (int, error) { return 1, nil }

// median returns the median of ds.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// pingRTT returns the median of n PINGs on c.
func pingRTT(t *testing.T, c goredis.UniversalClient, n int) time.Duration {
	ds := make([]time.Duration, n)
	for i := range ds {
		start := time.Now()
		require.NoError(t, c.Ping(context.Background()).Err())
		ds[i] = time.Since(start)
	}
	return median(ds)
}

// SPEC CB-5: one instance opens, the others follow after one script run and one delivery
// (a generous bound: on a loaded machine the processes' scheduling dominates).
func TestCB5_OthersFollowAnOpening(t *testing.T) {
	followAnOpening(t, []string{redistest.Addr(t)}, false)
}

// The same on the Redis Cluster of the tests.
func TestCB5_OthersFollowAnOpeningOnACluster(t *testing.T) {
	followAnOpening(t, redistest.ClusterAddrs(t), true)
}

func followAnOpening(t *testing.T, addrs []string, cluster bool) {
	const rounds = 15
	var follows []time.Duration
	var rtt time.Duration
	for r := range rounds {
		ins := newFleet(t, addrs, cluster, 3, fmt.Sprintf("inventory-%d", r))
		a := ins[0]
		require.ErrorIs(t, call(a.b, fail), errDown)
		require.ErrorIs(t, call(a.b, fail), errDown)
		require.Equal(t, cb.Open, a.state())
		opened := a.seen(cb.Open)[0]
		assert.False(t, opened.fleet, "the instance that opened did so itself")
		for _, other := range ins[1:] {
			require.Eventually(t, func() bool { return len(other.seen(cb.Open)) == 1 }, 2*time.Second, time.Millisecond)
			got := other.seen(cb.Open)[0]
			assert.True(t, got.fleet, "a followed transition carries fleet=true")
			follows = append(follows, got.at.Sub(opened.at))
			err := call(other.b, succeed)
			require.ErrorIs(t, err, cb.ErrOpen, "the other instances refuse")
		}
		rtt = max(rtt, pingRTT(t, ins[1].client, 20))
		for _, in := range ins {
			require.NoError(t, in.fleet.Close())
		}
	}
	m := median(follows)
	t.Logf("cluster=%v: transition to the others' follow: median %v, max %v over %d; PING round trip %v (the largest of the rounds' medians)",
		cluster, m, slices.Max(follows), len(follows), rtt)
	// Generous: one CAS round trip and one delivery are about two PINGs; the machine is
	// shared, so allow far more, but not a polling interval's worth of waiting.
	assert.Less(t, m, 20*rtt+20*time.Millisecond, "the others follow the opening")
}

// SPEC CB-6: at most PermittedInHalfOpen trials run fleet-wide, and their outcomes close
// (or open again) every instance.
func TestFleet_HalfOpenTrialsAreBoundedFleetWide(t *testing.T) {
	halfOpenBounded(t, []string{redistest.Addr(t)}, false)
}

func TestFleet_Cluster_HalfOpenTrialsAreBoundedFleetWide(t *testing.T) {
	halfOpenBounded(t, redistest.ClusterAddrs(t), true)
}

func halfOpenBounded(t *testing.T, addrs []string, cluster bool) {
	for _, outcome := range []string{cb.Closed, cb.Open} {
		t.Run(outcome, func(t *testing.T) {
			ins := newFleet(t, addrs, cluster, 3, "trials")
			require.ErrorIs(t, call(ins[0].b, fail), errDown)
			require.ErrorIs(t, call(ins[0].b, fail), errDown)
			for _, in := range ins {
				require.Eventually(t, func() bool { return in.state() == cb.Open }, 2*time.Second, time.Millisecond)
				in.clk.Advance(time.Minute)
			}
			var running, most, ran atomic.Int64
			release := make(chan struct{})
			trial := func(context.Context) (int, error) {
				n := running.Add(1)
				ran.Add(1)
				for {
					m := most.Load()
					if n <= m || most.CompareAndSwap(m, n) {
						break
					}
				}
				<-release
				running.Add(-1)
				if outcome == cb.Open {
					return 0, errDown
				}
				return 1, nil
			}
			var wg sync.WaitGroup
			var refused atomic.Int64
			for i := range 30 {
				wg.Go(func() {
					if errors.Is(call(ins[i%3].b, trial), cb.ErrOpen) {
						refused.Add(1)
					}
				})
			}
			require.Eventually(t, func() bool { return ran.Load() == 3 && refused.Load() == 27 }, 5*time.Second, time.Millisecond,
				"3 trials run and 27 calls are refused (ran %d, refused %d)", ran.Load(), refused.Load())
			close(release)
			wg.Wait()
			assert.Equal(t, int64(3), most.Load(), "at most PermittedInHalfOpen trials at once, fleet-wide")
			assert.Equal(t, int64(3), ran.Load(), "at most PermittedInHalfOpen trials in all")
			for _, in := range ins {
				require.Eventually(t, func() bool { return in.state() == outcome }, 2*time.Second, time.Millisecond,
					"every instance follows the trials' decision")
			}
		})
	}
}

// SPEC CB-7: two instances that open at once make one transition.
func TestFleet_OpeningAtOnceIsOneTransition(t *testing.T) {
	ins := newFleet(t, []string{redistest.Addr(t)}, false, 2, "race")
	var wg sync.WaitGroup
	for _, in := range ins {
		wg.Go(func() {
			_ = call(in.b, fail)
			_ = call(in.b, fail)
		})
	}
	wg.Wait()
	c := ins[0].client
	key := keyOf(t, "race")
	require.Eventually(t, func() bool {
		v, err := c.HGet(context.Background(), key, "e").Result()
		return err == nil && v == "1"
	}, 2*time.Second, time.Millisecond)
	// Give a second proposal time to land, were it to be applied.
	require.NoError(t, c.Ping(context.Background()).Err())
	time.Sleep(50 * time.Millisecond)
	v, err := c.HMGet(context.Background(), key, "s", "e").Result()
	require.NoError(t, err)
	assert.Equal(t, []any{"open", "1"}, v, "one transition, epoch 1")
}

// SPEC CB-8: while Redis does not answer, each breaker works alone and no call waits on
// Redis; once it answers, every instance takes the key's state.
func TestFleet_RedisPausedThenBack(t *testing.T) {
	srv := redistest.Start(t)
	ins := newFleet(t, []string{srv.Addr()}, false, 2, "paused")
	a, b := ins[0], ins[1]
	srv.Pause()
	start := time.Now()
	require.ErrorIs(t, call(a.b, fail), errDown)
	require.ErrorIs(t, call(a.b, fail), errDown)
	assert.Less(t, time.Since(start), 50*time.Millisecond, "a closed breaker's calls do not wait on Redis")
	assert.Equal(t, cb.Open, a.state(), "the breaker opens alone")
	require.NoError(t, call(b.b, succeed), "the other does not know")
	assert.Equal(t, cb.Closed, b.state())
	srv.Resume()
	// The transition sent while Redis was paused may or may not have been applied (a
	// request that timed out may still run once the server resumes): either way, both
	// instances end up with the key's state.
	converge(t, keyOf(t, "paused"), a, b)
	require.NoError(t, a.b.TransitionTo(cb.Closed))
	require.Eventually(t, func() bool { return b.state() == cb.Closed }, 5*time.Second, 5*time.Millisecond,
		"%v", func() any {
			v, _ := a.client.HGetAll(context.Background(), keyOf(t, "paused")).Result()
			return []any{v, a.state(), b.state()}
		}())
	require.ErrorIs(t, call(a.b, fail), errDown)
	require.ErrorIs(t, call(a.b, fail), errDown)
	require.Eventually(t, func() bool { return b.state() == cb.Open }, 5*time.Second, 5*time.Millisecond,
		"and the next opening is followed")
}

// SPEC CB-8: after Redis was down (killed, and restarted without its keys), every
// instance takes the key's state, and follows the next transitions.
func TestFleet_RedisDownThenBack(t *testing.T) {
	srv := redistest.Start(t)
	ins := newFleet(t, []string{srv.Addr()}, false, 2, "down")
	a, b := ins[0], ins[1]
	srv.Kill()
	require.ErrorIs(t, call(a.b, fail), errDown)
	require.ErrorIs(t, call(a.b, fail), errDown)
	assert.Equal(t, cb.Open, a.state(), "the breaker opens alone")
	require.NoError(t, call(b.b, succeed), "the other does not know")
	require.NoError(t, srv.Restart())
	converge(t, keyOf(t, "down"), a, b)
	require.NoError(t, a.b.TransitionTo(cb.Closed))
	require.Eventually(t, func() bool { return b.state() == cb.Closed }, 5*time.Second, 5*time.Millisecond,
		"%v", func() any {
			v, _ := a.client.HGetAll(context.Background(), keyOf(t, "paused")).Result()
			return []any{v, a.state(), b.state()}
		}())
	require.ErrorIs(t, call(a.b, fail), errDown)
	require.ErrorIs(t, call(a.b, fail), errDown)
	require.Eventually(t, func() bool { return b.state() == cb.Open }, 5*time.Second, 5*time.Millisecond,
		"the next opening is followed")
}

// converge waits until every instance's state is the key's.
func converge(t *testing.T, key string, ins ...*instance) {
	require.Eventually(t, func() bool {
		v, err := ins[0].client.HGet(context.Background(), key, "s").Result()
		if errors.Is(err, goredis.Nil) {
			v, err = cb.Closed, nil
		}
		if err != nil {
			return false
		}
		for _, in := range ins {
			if in.state() != v {
				return false
			}
		}
		return true
	}, 5*time.Second, 5*time.Millisecond, "every instance takes the key's state")
}

// SPEC CB-9: on a cluster, a failure of a node that does not hold the name's slot does
// not disturb the fleet.
func TestFleet_Cluster_OtherNodeFails(t *testing.T) {
	c := redistest.StartCluster(t)
	name := "survivor"
	key := keyOf(t, name)
	owner, err := c.SlotOwner(context.Background(), redistest.KeySlot(key))
	require.NoError(t, err)
	ins := newFleet(t, c.Addrs(), true, 3, name)
	for i := range 3 {
		if c.Node(i).Addr() != owner {
			c.Node(i).Kill()
			break
		}
	}
	require.ErrorIs(t, call(ins[0].b, fail), errDown)
	require.ErrorIs(t, call(ins[0].b, fail), errDown)
	for _, in := range ins[1:] {
		require.Eventually(t, func() bool { return in.state() == cb.Open }, 2*time.Second, time.Millisecond)
	}
}

// A breaker without WithFleet is as before: it shares nothing.
func TestFleet_WithoutTheOptionNothingIsShared(t *testing.T) {
	ins := newFleet(t, []string{redistest.Addr(t)}, false, 1, "alone")
	solo, err := cb.New(cb.Name("alone"), cb.SlidingWindowSize(2), cb.MinimumCalls(2))
	require.NoError(t, err)
	require.ErrorIs(t, call(ins[0].b, fail), errDown)
	require.ErrorIs(t, call(ins[0].b, fail), errDown)
	require.Equal(t, cb.Open, ins[0].state())
	require.NoError(t, ins[0].client.Ping(context.Background()).Err())
	time.Sleep(20 * time.Millisecond)
	assert.Equal(t, cb.Closed, solo.Snapshot().State)
}

func TestNew_BadOptions(t *testing.T) {
	_, err := cbredis.New(nil)
	assert.ErrorContains(t, err, "R4C-REG-010")
	c := goredis.NewClient(&goredis.Options{})
	defer c.Close()
	_, err = cbredis.New(c, cbredis.Timeout(0))
	assert.ErrorContains(t, err, "R4C-ATR-007")
}

func TestWithFleet_NeedsAName(t *testing.T) {
	c := newClient(t, []string{redistest.Addr(t)}, false)
	f, err := cbredis.New(c)
	require.NoError(t, err)
	defer f.Close()
	_, err = cb.New(cb.WithFleet(f))
	assert.ErrorContains(t, err, "R4C-REG-010")
}

// A registry's breaker joins the fleet once, under its Name, and is shared by the
// functions wrapped with it.
func TestFleet_ThroughARegistry(t *testing.T) {
	c := newClient(t, []string{redistest.Addr(t)}, false)
	f, err := cbredis.New(c, cbredis.Prefix(prefixOf(t)))
	require.NoError(t, err)
	defer f.Close()
	other := newFleet(t, []string{redistest.Addr(t)}, false, 1, "reg")[0]
	reg, err := resilience.NewRegistry()
	require.NoError(t, err)
	spec := resilience.CircuitBreaker(cb.Name("reg"), cb.WithFleet(f), cb.SlidingWindowSize(2), cb.MinimumCalls(2))
	get, err := resilience.Wrap(reg, "Inventory.Get", fail, spec)
	require.NoError(t, err)
	put, err := resilience.Wrap(reg, "Inventory.Put", succeed, spec)
	require.NoError(t, err)
	waitSubscribed(t, c, "reg", 2) // this one and the other instance: one member each
	_, _ = get(context.Background())
	_, _ = get(context.Background())
	_, err = put(context.Background())
	require.ErrorIs(t, err, cb.ErrOpen, "one breaker for both functions")
	require.Eventually(t, func() bool { return other.state() == cb.Open }, 2*time.Second, time.Millisecond)
}
