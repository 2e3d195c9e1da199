package redistest

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newClusterClient returns a go-redis cluster client of addrs that honours context
// deadlines, closed when t ends.
func newClusterClient(t testing.TB, addrs []string) *goredis.ClusterClient {
	t.Helper()
	c := goredis.NewClusterClient(&goredis.ClusterOptions{
		Addrs: addrs, ContextTimeoutEnabled: true, ReadTimeout: time.Second, DialTimeout: time.Second,
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// keyOn returns a key, prefix followed by digits, that falls in node i's slots of a new
// cluster.
func keyOn(i int, prefix string) string {
	first, last := slotRange(i)
	for n := 0; ; n++ {
		key := prefix + strconv.Itoa(n)
		if s := KeySlot(key); s >= first && s <= last {
			return key
		}
	}
}

// errorCount returns how many times INFO errorstats says the node answered with the
// error prefix.
func errorCount(stats, prefix string) int {
	_, after, found := strings.Cut(stats, "errorstat_"+prefix+":count=")
	if !found {
		return 0
	}
	end := strings.IndexAny(after, "\r\n")
	if end < 0 {
		end = len(after)
	}
	n, _ := strconv.Atoi(after[:end])
	return n
}

// isTimeout reports whether err says that the server did not answer in time.
func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// KeySlot gives Redis's slots: the CRC16 reference value of the cluster specification
// and hash tags.
func TestKeySlot(t *testing.T) {
	for key, slot := range map[string]int{
		"123456789":            0x31C3 % ClusterSlots, // the specification's CRC16 check value
		"foo":                  12182,
		"bar":                  5061,
		"":                     0,
		"{user1000}.following": KeySlot("user1000"),
		"{user1000}.followers": KeySlot("user1000"),
		"foo{}{bar}":           KeySlot("foo{}{bar}"), // an empty tag: the whole key
		"foo{{bar}}zap":        KeySlot("{bar"),
		"foo{bar}{zap}":        KeySlot("bar"),
	} {
		assert.Equal(t, slot, KeySlot(key), key)
	}
	assert.NotEqual(t, KeySlot("foo{}{bar}"), KeySlot("bar"))
}

// The node ranges split the slots in even thirds, as redis-cli --cluster create does.
func TestSlotRange(t *testing.T) {
	for i, want := range [][2]int{{0, 5460}, {5461, 10922}, {10923, 16383}} {
		first, last := slotRange(i)
		assert.Equal(t, want, [2]int{first, last}, "node %d", i)
	}
}

// A started cluster serves keys on each of its three masters, each node's slots as
// planned, every node agreeing, and KeySlot agrees with CLUSTER KEYSLOT. When the test
// ends, every node is stopped, a paused one too: the processes have exited and their
// directories are gone.
func TestStartCluster_ServesKeysOnEveryNodeUntilTheTestEnds(t *testing.T) {
	needRedisServer(t)
	t.Parallel()
	var cmds []*exec.Cmd
	var dirs, addrs []string
	t.Run("cluster", func(t *testing.T) {
		began := time.Now()
		c := StartCluster(t)
		t.Logf("cluster ready in %v", time.Since(began))
		addrs = c.Addrs()
		servesKeysOnEveryNode(t, c)
		c.Node(1).Pause()
		for i := range ClusterNodes {
			srv := c.Node(i).srv
			srv.mu.Lock()
			cmds = append(cmds, srv.cmd)
			srv.mu.Unlock()
			dirs = append(dirs, srv.dir)
			_, err := os.Stat(filepath.Join(srv.dir, "nodes.conf"))
			require.NoError(t, err, "the node's files are in its own directory")
		}
	})
	require.Len(t, cmds, ClusterNodes)
	for i := range ClusterNodes {
		assert.NotNil(t, cmds[i].ProcessState, "node %d exited", i)
		_, err := os.Stat(dirs[i])
		assert.ErrorIs(t, err, os.ErrNotExist, "node %d's directory removed", i)
		assert.True(t, refused(addrs[i]), "node %d stopped", i)
	}
}

// refused reports whether a connection to addr is refused: nothing listens there.
func refused(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		_ = conn.Close()
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

// servesKeysOnEveryNode checks that c is ready everywhere, with each node's slots as
// planned, and that a cluster client sets and gets a key on each node.
func servesKeysOnEveryNode(t *testing.T, c *Cluster) {
	t.Helper()
	addrs := c.Addrs()
	require.Len(t, addrs, ClusterNodes)
	assert.NotEqual(t, addrs[0], addrs[1])
	assert.NotEqual(t, addrs[1], addrs[2])
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, c.notReady(ctx), "ready everywhere")

	cc := newClusterClient(t, addrs)
	for i := range ClusterNodes {
		node := c.Node(i)
		assert.Equal(t, addrs[i], node.Addr())
		assert.Len(t, node.ID(), 40)
		first, last := slotRange(i)
		for _, s := range []int{first, last} {
			owner, err := c.SlotOwner(ctx, s)
			require.NoError(t, err)
			assert.Equal(t, addrs[i], owner, "slot %d", s)
		}

		key := keyOn(i, "serve:")
		slot, err := node.admin.ClusterKeySlot(ctx, key).Result()
		require.NoError(t, err)
		assert.Equal(t, int(slot), KeySlot(key))
		require.NoError(t, cc.Set(ctx, key, "v"+strconv.Itoa(i), 0).Err())
		got, err := cc.Get(ctx, key).Result()
		require.NoError(t, err)
		assert.Equal(t, "v"+strconv.Itoa(i), got)
		got, err = node.admin.Get(ctx, key).Result()
		require.NoError(t, err, "the key is on node %d itself", i)
		assert.Equal(t, "v"+strconv.Itoa(i), got)
	}
	_, err := c.SlotOwner(ctx, ClusterSlots)
	assert.Error(t, err)
	_, err = c.SlotOwner(ctx, -1)
	assert.Error(t, err)
}

// A paused node hangs: requests for its keys time out while the other nodes keep serving
// theirs; resumed, it answers at once with its keys intact. Pause and Resume are
// idempotent.
func TestCluster_PauseAndResume(t *testing.T) {
	needRedisServer(t)
	t.Parallel()
	c := StartCluster(t)
	cc := newClusterClient(t, c.Addrs())
	ctx := context.Background()
	keys := make([]string, ClusterNodes)
	for i := range keys {
		keys[i] = keyOn(i, "pause:")
		require.NoError(t, cc.Set(ctx, keys[i], i, 0).Err())
	}

	c.Node(1).Pause()
	c.Node(1).Pause()
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err := cc.Get(short, keys[1]).Err()
	cancel()
	require.Error(t, err)
	assert.True(t, isTimeout(err), "the paused node does not answer: %v", err)
	for _, i := range []int{0, 2} {
		bounded, cancel := context.WithTimeout(ctx, 2*time.Second)
		got, err := cc.Get(bounded, keys[i]).Int()
		cancel()
		require.NoError(t, err, "node %d serves while node 1 is paused", i)
		assert.Equal(t, i, got)
	}
	owner, err := c.SlotOwner(ctx, KeySlot(keys[1]))
	require.NoError(t, err, "asks a node that runs")
	assert.Equal(t, c.Addrs()[1], owner)

	c.Node(1).Resume()
	c.Node(1).Resume()
	bounded, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	got, err := cc.Get(bounded, keys[1]).Int()
	require.NoError(t, err, "the resumed node serves at once")
	assert.Equal(t, 1, got)
}

// MoveSlots moves 3000 slots, with their keys (one slot with more keys than one MIGRATE
// moves), while clients run a script on those keys: no call fails, no write is lost,
// and afterwards every node says the target serves the slots. A move while the third
// node is paused reaches it once it runs again.
func TestCluster_MoveSlotsUnderTraffic(t *testing.T) {
	needRedisServer(t)
	t.Parallel()
	c := StartCluster(t)
	addrs := c.Addrs()
	cc := newClusterClient(t, addrs)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	const moved = 3000 // slots 0..2999, all node 0's
	keyOf := make(map[int]string, moved)
	for n := 0; len(keyOf) < moved; n++ {
		key := "move:" + strconv.Itoa(n)
		if s := KeySlot(key); s < moved && keyOf[s] == "" {
			keyOf[s] = key
		}
	}
	tag := "big"
	for n := 0; KeySlot(tag) >= moved; n++ {
		tag = "big" + strconv.Itoa(n)
	}
	keys := make([]string, 0, moved+2500)
	for _, k := range keyOf {
		keys = append(keys, k)
	}
	for n := range 2500 {
		keys = append(keys, "{"+tag+"}:"+strconv.Itoa(n))
	}
	_, err := cc.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for _, k := range keys {
			p.Set(ctx, k, 0, 0)
		}
		return nil
	})
	require.NoError(t, err)

	incr := goredis.NewScript(`return redis.call('INCR', KEYS[1])`)
	counts := make([]atomic.Int64, len(keys))
	var ops atomic.Int64
	var failure atomic.Pointer[error]
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				i := rand.IntN(len(keys))
				if err := incr.Run(ctx, cc, []string{keys[i]}).Err(); err != nil {
					failure.CompareAndSwap(nil, &err)
					return
				}
				counts[i].Add(1)
				ops.Add(1)
			}
		})
	}
	waitOps := func(n int64) {
		for ops.Load() < n && failure.Load() == nil && ctx.Err() == nil {
			time.Sleep(time.Millisecond) // waiting for the clients to make progress
		}
	}
	waitOps(200)

	// Bad input changes nothing.
	assert.Error(t, c.MoveSlots(ctx, 0, 0, []int{1}), "same node")
	assert.Error(t, c.MoveSlots(ctx, 0, 3, []int{1}), "no node 3")
	assert.Error(t, c.MoveSlots(ctx, -1, 1, []int{1}), "no node -1")
	assert.Error(t, c.MoveSlots(ctx, 0, 1, []int{ClusterSlots}), "no slot 16384")
	assert.Error(t, c.MoveSlots(ctx, 0, 1, []int{-1}), "no slot -1")
	assert.Error(t, c.MoveSlots(ctx, 1, 0, []int{1}), "node 1 does not serve slot 1")
	assert.NoError(t, c.MoveSlots(ctx, 0, 1, nil), "nothing to move")
	c.Node(0).Pause()
	assert.Error(t, c.MoveSlots(ctx, 0, 1, []int{1}), "node 0 is paused")
	c.Node(0).Resume()

	slots := make([]int, moved)
	for s := range slots {
		slots[s] = moved - 1 - s // in any order, with repeats
	}
	slots = append(slots, 7, 7)
	began := time.Now()
	require.NoError(t, c.MoveSlots(ctx, 0, 1, slots))
	took := time.Since(began)
	during := ops.Load()
	waitOps(during + 200)
	close(stop)
	wg.Wait()
	if err := failure.Load(); err != nil {
		require.NoError(t, *err, "a call failed while the slots moved")
	}
	stats, err := c.Node(0).admin.Info(ctx, "errorstats").Result()
	require.NoError(t, err)
	asks, moves := errorCount(stats, "ASK"), errorCount(stats, "MOVED")
	t.Logf("moved %d slots, %d keys, in %v; %d script calls, %d of them after the move; node 0 "+
		"answered ASK %d times, MOVED %d times", moved, len(keys), took, ops.Load(), ops.Load()-during, asks, moves)
	if strings.Contains(stats, "errorstat_") { // Redis 6.2 and later
		assert.Positive(t, asks+moves, "the clients were redirected")
	}

	for _, s := range []int{0, 7, 1500, moved - 1, KeySlot(tag)} {
		owner, err := c.SlotOwner(ctx, s)
		require.NoError(t, err)
		assert.Equal(t, addrs[1], owner, "slot %d", s)
	}
	owner, err := c.SlotOwner(ctx, moved)
	require.NoError(t, err)
	assert.Equal(t, addrs[0], owner, "slot %d stays", moved)
	require.NoError(t, c.notReady(ctx), "every node says the same")

	vals := make([]*goredis.StringCmd, len(keys))
	_, err = cc.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for i, k := range keys {
			vals[i] = p.Get(ctx, k)
		}
		return nil
	})
	require.NoError(t, err)
	for i, v := range vals {
		got, err := v.Int64()
		require.NoError(t, err, keys[i])
		require.Equal(t, counts[i].Load(), got, "every write to %s kept", keys[i])
	}
	n, err := c.Node(1).admin.ClusterCountKeysInSlot(ctx, KeySlot(tag)).Result()
	require.NoError(t, err)
	assert.EqualValues(t, 2500+1, n, "the keys are on node 1 (the tag's and keyOf's one)")
	n, err = c.Node(0).admin.ClusterCountKeysInSlot(ctx, KeySlot(tag)).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "and no longer on node 0")

	// A paused third node learns of a move once it runs.
	c.Node(2).Pause()
	require.NoError(t, c.MoveSlots(ctx, 0, 1, []int{moved, moved + 1}))
	c.Node(2).Resume()
	ready, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	began = time.Now()
	require.NoError(t, c.waitReady(ready), "node 2 agrees")
	t.Logf("node 2 agreed %v after it was resumed", time.Since(began))
	owners, err := c.Node(2).owners(ctx)
	require.NoError(t, err)
	assert.Equal(t, addrs[1], owners[moved])
	assert.Equal(t, addrs[1], owners[moved+1])
	assert.Equal(t, addrs[0], owners[moved+2])
}

// A killed node loses its keys while the others serve theirs; restarted, it has the same
// address, node ID and slots, and serves again.
func TestCluster_KillAndRestart(t *testing.T) {
	needRedisServer(t)
	t.Parallel()
	c := StartCluster(t)
	cc := newClusterClient(t, c.Addrs())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	k0, k2 := keyOn(0, "kill:"), keyOn(2, "kill:")
	require.NoError(t, cc.Set(ctx, k0, "a", 0).Err())
	require.NoError(t, cc.Set(ctx, k2, "b", 0).Err())
	id := c.Node(2).ID()
	assert.Error(t, c.Node(2).Restart(), "running")

	c.Node(2).Kill()
	c.Node(2).Kill()
	assert.True(t, refused(c.Node(2).Addr()))
	got, err := cc.Get(ctx, k0).Result()
	require.NoError(t, err, "node 0 serves while node 2 is down")
	assert.Equal(t, "a", got)

	require.NoError(t, c.Node(2).Restart())
	assert.Equal(t, id, c.Node(2).ID())
	owners, err := c.Node(2).owners(ctx)
	require.NoError(t, err)
	first, last := slotRange(2)
	assert.Equal(t, c.Addrs()[2], owners[first])
	assert.Equal(t, c.Addrs()[2], owners[last])
	assert.ErrorIs(t, c.Node(2).admin.Get(ctx, k2).Err(), goredis.Nil, "no persistence: it comes back empty")
	require.NoError(t, cc.Set(ctx, k2, "c", 0).Err())
}

// Without redis-server, StartCluster skips, or fails in CI.
func TestStartCluster_SkipsWithoutRedisServer(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("CI", "")
	var r recorder
	assert.Nil(t, StartCluster(&r))
	assert.Contains(t, r.skipped, "install redis-server")
	t.Setenv("CI", "true")
	r = recorder{}
	assert.Nil(t, StartCluster(&r))
	assert.Contains(t, r.failed, "install redis-server")
	assert.Empty(t, r.skipped)
}

// REDIS_CLUSTER_ADDRS, when it names any address, is the cluster, with or without
// redis-server on PATH: nothing is started.
func TestFindCluster_EnvAddrsAreTheCluster(t *testing.T) {
	for _, path := range []string{t.TempDir(), os.Getenv("PATH")} {
		t.Setenv("PATH", path)
		var s sharedClusterState
		addrs, err := s.find(" 10.0.0.1:7000, 10.0.0.2:7001 ,,10.0.0.3:7002")
		require.NoError(t, err)
		assert.Equal(t, []string{"10.0.0.1:7000", "10.0.0.2:7001", "10.0.0.3:7002"}, addrs)
		assert.Nil(t, s.c)
		addrs[0] = "changed"
		again, err := s.find("")
		require.NoError(t, err)
		assert.Equal(t, "10.0.0.1:7000", again[0], "each caller has its own slice")
	}
}

// Without REDIS_CLUSTER_ADDRS and without redis-server, the error is kept and the message
// says how to make the test run.
func TestFindCluster_NoServer(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var s sharedClusterState
	_, err := s.find("")
	require.Error(t, err)
	_, again := s.find("")
	assert.Same(t, err, again, "not tried again")
	msg := UnavailableCluster(err)
	assert.Contains(t, msg, "install redis-server")
	assert.Contains(t, msg, "set REDIS_CLUSTER_ADDRS=host:port,")
	assert.Contains(t, msg, err.Error())
}

// swap replaces s's state with f and returns the old one, for the tests of ClusterAddrs.
func (s *sharedClusterState) swap(f foundCluster) foundCluster {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.foundCluster
	s.foundCluster = f
	return old
}

// ClusterAddrs returns REDIS_CLUSTER_ADDRS's addresses when it is set.
func TestClusterAddrs_FromEnv(t *testing.T) {
	t.Setenv(EnvClusterAddrs, "127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002")
	saved := sharedCluster.swap(foundCluster{})
	defer sharedCluster.swap(saved)
	assert.Equal(t, []string{"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"}, ClusterAddrs(t))
}

// ClusterAddrs skips with the message when there is no cluster at all, or fails in CI.
func TestClusterAddrs_SkipsWithoutServer(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv(EnvClusterAddrs, "")
	t.Setenv("CI", "")
	saved := sharedCluster.swap(foundCluster{})
	defer sharedCluster.swap(saved)
	var r recorder
	assert.Nil(t, ClusterAddrs(&r))
	assert.Contains(t, r.skipped, "install redis-server")
	assert.Contains(t, r.skipped, EnvClusterAddrs)
	t.Setenv("CI", "true")
	r = recorder{}
	ClusterAddrs(&r)
	assert.Contains(t, r.failed, EnvClusterAddrs)
}

// Without REDIS_CLUSTER_ADDRS and with redis-server on PATH, the first ClusterAddrs
// starts a cluster and later ones share it; Main's wrapper stops it once the tests have
// run.
func TestMain_StopsTheSharedCluster(t *testing.T) {
	needRedisServer(t)
	t.Setenv(EnvClusterAddrs, "")
	saved := sharedCluster.swap(foundCluster{})
	defer sharedCluster.swap(saved)
	addrs := ClusterAddrs(t)
	require.Len(t, addrs, ClusterNodes)
	cc := newClusterClient(t, addrs)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, cc.Set(ctx, "shared", "v", 0).Err())
	assert.Equal(t, addrs, ClusterAddrs(t), "one cluster per process")

	assert.Equal(t, 3, Main(exitCode(3)).Run())
	for _, a := range addrs {
		assert.True(t, refused(a), "stopped")
	}
	sharedCluster.stop()
}

// A paused server does not answer until resumed; Pause and Resume are idempotent, and a
// paused server is killed all the same.
func TestStart_PauseAndResume(t *testing.T) {
	needRedisServer(t)
	srv := Start(t)
	c := goredis.NewClient(&goredis.Options{Addr: srv.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	require.NoError(t, c.Set(ctx, "k", "v", 0).Err())

	srv.Pause()
	srv.Pause()
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err := c.Get(short, "k").Err()
	cancel()
	assert.True(t, isTimeout(err), "paused: %v", err)

	srv.Resume()
	srv.Resume()
	got, err := c.Get(ctx, "k").Result()
	require.NoError(t, err, "resumed, with its data")
	assert.Equal(t, "v", got)

	srv.Pause()
	srv.Kill()
	assert.True(t, refused(srv.Addr()), "killed while paused")
	srv.Resume()
	require.NoError(t, srv.Restart())
	assert.NoError(t, ping(srv.Addr()))
}
