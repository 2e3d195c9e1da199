package redistest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// EnvClusterAddrs is the environment variable that names the masters of an existing Redis
// Cluster: host:port addresses separated by commas.
const EnvClusterAddrs = "REDIS_CLUSTER_ADDRS"

// ClusterNodes is the number of nodes of a started cluster: three masters, no replicas.
const ClusterNodes = 3

// ClusterSlots is the number of hash slots of a Redis Cluster, 0 to 16383.
const ClusterSlots = 16384

// ClusterNodeTimeout is the cluster-node-timeout of a started cluster's nodes: how long a
// node may go unanswered before the others take it for failing. It is Redis's default,
// 15s, longer than the few seconds for which tests pause a node, so that such a pause
// goes unnoticed by the cluster, as a hang shorter than the timeout would in production:
// no node is marked as failing, and once resumed the node serves at once (a master that
// finds itself cut off from the majority would wait up to the timeout, 5s at most,
// before it serves again). The other two nodes serve their slots throughout either way:
// full coverage is not required, and they are a majority.
const ClusterNodeTimeout = 15 * time.Second

// clusterReadyWithin bounds how long a started (or restarted) cluster may take to say
// cluster_state:ok on every node with the same slots everywhere. A new master waits 2s
// before it says ok.
const clusterReadyWithin = 15 * time.Second

// migrateTimeout is MIGRATE's timeout, in milliseconds: how long the source node waits
// on the target.
const migrateTimeout = 10000

// moveBatch is how many slots MoveSlots opens at a time; keysBatch is how many keys of a
// slot one CLUSTER GETKEYSINSLOT and MIGRATE move.
const (
	moveBatch = 1024
	keysBatch = 1000
)

// clusterArgs are the redis-server arguments of a cluster node, after Server's own.
var clusterArgs = []string{
	"--cluster-enabled", "yes",
	"--cluster-config-file", "nodes.conf",
	"--cluster-require-full-coverage", "no",
	"--cluster-node-timeout", strconv.Itoa(int(ClusterNodeTimeout / time.Millisecond)),
	"--cluster-announce-ip", "127.0.0.1",
}

// Cluster is a Redis Cluster of three masters on 127.0.0.1, started by StartCluster. Node
// i serves an even third of the slots, in order: 0-5460, 5461-10922 and 10923-16383 (as
// redis-cli --cluster create splits them). Its methods are safe for concurrent use, but
// MoveSlots, Node's Kill and Restart change the cluster: run one at a time.
type Cluster struct {
	nodes []*Node
}

// Node is a master of a Cluster: a Server with its node ID. Its methods are safe for
// concurrent use.
type Node struct {
	srv   *Server
	id    string
	index int
	admin *goredis.Client // for the cluster's own commands, closed when the cluster stops
	c     *Cluster
}

// StartCluster starts a Redis Cluster of t's own: three masters on free loopback ports,
// without persistence, each in a temporary directory of its own, joined from Go (CLUSTER
// MEET, CLUSTER ADDSLOTS). It returns once every node says cluster_state:ok and every
// node's CLUSTER SLOTS gives the same owner for all 16384 slots, about 2s after the
// start (a new master waits that long before it serves), and fails t when that takes
// more than 15s. The nodes are stopped, and their directories removed, when t ends; a
// paused node is resumed first. REDIS_CLUSTER_ADDRS does not help here: when
// redis-server is not on PATH, t skips with a message that says so (or fails when
// CI=true).
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	c, err := startCluster()
	if err != nil {
		if _, missing := errors.AsType[*exec.Error](err); missing {
			unavailable(t, "this test starts a Redis Cluster of its own: install redis-server ("+err.Error()+")")
			return nil
		}
		t.Fatal(err)
		return nil
	}
	t.Cleanup(c.stop)
	return c
}

// Addrs returns the addresses of the cluster's masters, 127.0.0.1:port, in node order.
// They stay the same across a node's Restart.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		addrs[i] = n.srv.addr
	}
	return addrs
}

// Node returns the cluster's node i, 0 to 2. It panics for another i.
func (c *Cluster) Node(i int) *Node { return c.nodes[i] }

// Addr returns the node's address, 127.0.0.1:port.
func (n *Node) Addr() string { return n.srv.addr }

// ID returns the node's ID in the cluster, 40 hexadecimal digits. It stays the same
// across Restart.
func (n *Node) ID() string { return n.id }

// Pause stops the node's process (SIGSTOP) without ending it, as a hung node: requests
// sent to it wait, unanswered, until Resume; the other nodes keep serving their slots.
// Pausing a paused or killed node does nothing.
func (n *Node) Pause() { n.srv.Pause() }

// Resume lets a paused node run again (SIGCONT): it answers the requests that waited and
// serves its slots again at once, when it was paused for less than ClusterNodeTimeout.
// Resuming a node that is not paused does nothing.
func (n *Node) Resume() { n.srv.Resume() }

// Kill stops the node at once, as a crash would, and waits for the process to exit. Its
// keys are lost; the other nodes keep serving their slots. A paused node is resumed
// first. Killing a killed node does nothing.
func (n *Node) Kill() { n.srv.Kill() }

// Restart starts the killed node again on the same port, with the same node ID and slots
// (its nodes.conf is kept) but no keys, and waits until every running node says
// cluster_state:ok and their slots agree, 15s at most. It returns an error when the node
// runs, or does not start, or the cluster is not ready in time.
func (n *Node) Restart() error {
	if err := n.srv.Restart(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterReadyWithin)
	defer cancel()
	return n.c.waitReady(ctx)
}

// startCluster starts the nodes, joins them and waits until the cluster is ready. A
// missing redis-server is an *exec.Error.
func startCluster() (*Cluster, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, err
	}
	c := &Cluster{nodes: make([]*Node, ClusterNodes)}
	errs := make([]error, ClusterNodes)
	var wg sync.WaitGroup
	for i := range c.nodes {
		wg.Go(func() {
			srv, err := startWith(freeClusterPort, "r4c-redis-cluster-", clusterArgs)
			if err != nil {
				errs[i] = fmt.Errorf("node %d: %w", i, err)
				return
			}
			c.nodes[i] = &Node{srv: srv, index: i, c: c, admin: adminClient(srv.addr)}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		c.stop()
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterReadyWithin)
	defer cancel()
	if err := c.join(ctx); err != nil {
		c.stop()
		return nil, fmt.Errorf("redis cluster on %s: %w", strings.Join(c.Addrs(), ","), err)
	}
	return c, nil
}

// adminClient returns a client of addr for the cluster's own commands: no retries (a
// refused dial fails at once), the context's deadline honoured, and long reads for big
// pipelines.
func adminClient(addr string) *goredis.Client {
	return goredis.NewClient(&goredis.Options{
		Addr: addr, MaxRetries: -1, DialTimeout: time.Second, DialerRetries: 1, ReadTimeout: 30 * time.Second,
		ContextTimeoutEnabled: true, PoolSize: 2,
	})
}

// join gives each node its third of the slots and a config epoch of its own (as
// redis-cli --cluster create does, so that no epoch collision has to be resolved), makes
// each node meet the ones after it (so that none waits for gossip to learn of another),
// and waits until the cluster is ready.
func (c *Cluster) join(ctx context.Context) error {
	for i, n := range c.nodes {
		id, err := n.admin.ClusterMyID(ctx).Result()
		if err != nil {
			return fmt.Errorf("node %d: CLUSTER MYID: %w", i, err)
		}
		n.id = id
		first, last := slotRange(i)
		// CLUSTER ADDSLOTS rather than ADDSLOTSRANGE, which Redis 6 does not have.
		args := make([]any, 0, 2+last-first+1)
		args = append(args, "CLUSTER", "ADDSLOTS")
		for s := first; s <= last; s++ {
			args = append(args, s)
		}
		if err := n.admin.Do(ctx, args...).Err(); err != nil {
			return fmt.Errorf("node %d: CLUSTER ADDSLOTS %d-%d: %w", i, first, last, err)
		}
		if err := n.admin.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err(); err != nil {
			return fmt.Errorf("node %d: CLUSTER SET-CONFIG-EPOCH: %w", i, err)
		}
	}
	for i, a := range c.nodes {
		for _, b := range c.nodes[i+1:] {
			if err := a.admin.ClusterMeet(ctx, "127.0.0.1", strconv.Itoa(b.srv.port)).Err(); err != nil {
				return fmt.Errorf("node %d: CLUSTER MEET node %d: %w", a.index, b.index, err)
			}
		}
	}
	return c.waitReady(ctx)
}

// slotRange returns the first and last slot of node i of a new cluster: an even third,
// rounded as redis-cli --cluster create rounds.
func slotRange(i int) (first, last int) {
	per := float64(ClusterSlots) / ClusterNodes
	if i > 0 {
		first = int(math.Round(float64(i)*per-1)) + 1
	}
	last = int(math.Round(float64(i+1)*per - 1))
	if i == ClusterNodes-1 {
		last = ClusterSlots - 1
	}
	return first, last
}

// waitReady polls the running nodes (neither killed nor paused) until each says
// cluster_state:ok and all give the same owner for every slot, or ctx ends; the error
// then says what was still wrong.
func (c *Cluster) waitReady(ctx context.Context) error {
	for {
		problem := c.notReady(ctx)
		if problem == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready: %w", problem)
		case <-time.After(20 * time.Millisecond): // polling the nodes
		}
	}
}

// notReady returns what keeps the cluster from being ready, or nil.
func (c *Cluster) notReady(ctx context.Context) error {
	var first *Node
	var want *[ClusterSlots]string
	for _, n := range c.nodes {
		if !n.srv.running() {
			continue
		}
		info, err := n.admin.ClusterInfo(ctx).Result()
		if err != nil {
			return fmt.Errorf("node %d: CLUSTER INFO: %w", n.index, err)
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return fmt.Errorf("node %d does not say cluster_state:ok", n.index)
		}
		owners, err := n.owners(ctx)
		if err != nil {
			return err
		}
		for s, o := range owners {
			if o == "" {
				return fmt.Errorf("node %d: slot %d has no owner", n.index, s)
			}
		}
		if want == nil {
			first, want = n, owners
			continue
		}
		if *owners != *want {
			s := 0
			for owners[s] == want[s] {
				s++
			}
			return fmt.Errorf("node %d says %s serves slot %d, node %d says %s",
				first.index, want[s], s, n.index, owners[s])
		}
	}
	if want == nil {
		return errors.New("no node is running")
	}
	return nil
}

// owners returns the address of the master serving each slot, as n's CLUSTER SLOTS says;
// "" for a slot it does not assign.
func (n *Node) owners(ctx context.Context) (*[ClusterSlots]string, error) {
	ranges, err := n.admin.Do(ctx, "CLUSTER", "SLOTS").Slice()
	if err != nil {
		return nil, fmt.Errorf("node %d: CLUSTER SLOTS: %w", n.index, err)
	}
	var owners [ClusterSlots]string
	for _, r := range ranges {
		// [first slot, last slot, [master's host, port, ID, ...], replicas...]
		fields, _ := r.([]any)
		if len(fields) < 3 {
			return nil, fmt.Errorf("node %d: CLUSTER SLOTS: unexpected range %v", n.index, r)
		}
		first, ok1 := fields[0].(int64)
		last, ok2 := fields[1].(int64)
		master, _ := fields[2].([]any)
		if !ok1 || !ok2 || first < 0 || last >= ClusterSlots || len(master) < 2 {
			return nil, fmt.Errorf("node %d: CLUSTER SLOTS: unexpected range %v", n.index, r)
		}
		host, ok1 := master[0].(string)
		port, ok2 := master[1].(int64)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("node %d: CLUSTER SLOTS: unexpected master %v", n.index, master)
		}
		addr := net.JoinHostPort(host, strconv.FormatInt(port, 10))
		for s := first; s <= last; s++ {
			owners[s] = addr
		}
	}
	return &owners, nil
}

// live returns the first running node (neither killed nor paused).
func (c *Cluster) live() (*Node, error) {
	for _, n := range c.nodes {
		if n.srv.running() {
			return n, nil
		}
	}
	return nil, errors.New("no node of the cluster is running")
}

// SlotOwner returns the address of the master that serves slot, 0 to 16383, as CLUSTER
// SLOTS says on the first node that runs (neither killed nor paused). After MoveSlots,
// every node that ran during the move says the same.
func (c *Cluster) SlotOwner(ctx context.Context, slot int) (string, error) {
	if slot < 0 || slot >= ClusterSlots {
		return "", fmt.Errorf("slot %d is not in 0..%d", slot, ClusterSlots-1)
	}
	n, err := c.live()
	if err != nil {
		return "", err
	}
	owners, err := n.owners(ctx)
	if err != nil {
		return "", err
	}
	if owners[slot] == "" {
		return "", fmt.Errorf("node %d: slot %d has no owner", n.index, slot)
	}
	return owners[slot], nil
}

// MoveSlots moves slots, with their keys, from node from to node to (0 to 2) the way
// redis-cli --cluster reshard does, while clients keep using them: CLUSTER SETSLOT
// IMPORTING on the target and MIGRATING on the source; then CLUSTER GETKEYSINSLOT and
// MIGRATE ... REPLACE KEYS on the source until the slot is empty there (the source makes
// no new key in a migrating slot: it sends clients to the target with ASK); then CLUSTER
// SETSLOT NODE on the target, the source and the third node. Clients that follow ASK and
// MOVED redirections, as go-redis's ClusterClient does, see every key throughout, with
// every write kept (a command on several keys of a slot on the move may get TRYAGAIN,
// as in any resharding). Slots go 1024 at a time, each step pipelined, so the time grows with
// the number of slots and keys, not with their product.
//
// Both nodes must be running and not paused, and from must serve every slot (0 to
// 16383; repeats are ignored); else MoveSlots returns an error before it changes
// anything. A paused (or killed) third node is skipped: it learns the new owners from
// the others once it runs. A node paused during the move holds it up until it is
// resumed or ctx ends. An error in the middle (or the end of ctx) may leave slots open:
// the cluster is then unfit for more tests.
func (c *Cluster) MoveSlots(ctx context.Context, from, to int, slots []int) error {
	if from < 0 || from >= ClusterNodes || to < 0 || to >= ClusterNodes || from == to {
		return fmt.Errorf("cannot move slots from node %d to node %d: two different nodes, 0 to %d",
			from, to, ClusterNodes-1)
	}
	src, dst := c.nodes[from], c.nodes[to]
	for _, n := range []*Node{src, dst} {
		if !n.srv.running() {
			return fmt.Errorf("cannot move slots from node %d to node %d: node %d is paused or killed",
				from, to, n.index)
		}
	}
	if i := slices.IndexFunc(slots, func(s int) bool { return s < 0 || s >= ClusterSlots }); i >= 0 {
		return fmt.Errorf("cannot move slot %d: not in 0..%d", slots[i], ClusterSlots-1)
	}
	slots = slices.Clone(slots)
	slices.Sort(slots)
	slots = slices.Compact(slots)
	if len(slots) == 0 {
		return nil
	}
	owners, err := src.owners(ctx)
	if err != nil {
		return err
	}
	for _, s := range slots {
		if owners[s] != src.srv.addr {
			return fmt.Errorf("cannot move slot %d from node %d: node %d says %q serves it",
				s, from, from, owners[s])
		}
	}
	for batch := range slices.Chunk(slots, moveBatch) {
		if err := c.moveBatch(ctx, src, dst, batch); err != nil {
			return fmt.Errorf("move slots from node %d to node %d: %w", from, to, err)
		}
	}
	return nil
}

// moveBatch moves slots from src to dst, each step pipelined.
func (c *Cluster) moveBatch(ctx context.Context, src, dst *Node, slots []int) error {
	if err := setSlots(ctx, dst, slots, "IMPORTING", src.id); err != nil {
		return err
	}
	if err := setSlots(ctx, src, slots, "MIGRATING", dst.id); err != nil {
		return err
	}
	if err := migrateKeys(ctx, src, dst, slots); err != nil {
		return err
	}
	// The target first, so that the slot never lacks an owner that takes its keys; then
	// the source, which sends clients on with MOVED from then on.
	for _, n := range append([]*Node{dst, src}, c.others(src, dst)...) {
		if err := setSlots(ctx, n, slots, "NODE", dst.id); err != nil {
			return err
		}
	}
	return nil
}

// others returns the running nodes other than a and b.
func (c *Cluster) others(a, b *Node) []*Node {
	var others []*Node
	for _, n := range c.nodes {
		if n != a && n != b && n.srv.running() {
			others = append(others, n)
		}
	}
	return others
}

// setSlots runs CLUSTER SETSLOT slot how id on n for each slot, pipelined.
func setSlots(ctx context.Context, n *Node, slots []int, how, id string) error {
	pipe := n.admin.Pipeline()
	cmds := make([]*goredis.Cmd, len(slots))
	for i, s := range slots {
		cmds[i] = pipe.Do(ctx, "CLUSTER", "SETSLOT", s, how, id)
	}
	_, _ = pipe.Exec(ctx)
	for i, cmd := range cmds {
		if err := cmd.Err(); err != nil {
			return fmt.Errorf("node %d: CLUSTER SETSLOT %d %s: %w", n.index, slots[i], how, err)
		}
	}
	return nil
}

// migrateKeys moves the keys of slots, open (migrating) on src, to dst: CLUSTER
// GETKEYSINSLOT for every slot that may still hold keys, then one MIGRATE per slot with
// keys, pipelined, until no slot holds any.
func migrateKeys(ctx context.Context, src, dst *Node, slots []int) error {
	host, port, _ := net.SplitHostPort(dst.srv.addr)
	for len(slots) > 0 {
		pipe := src.admin.Pipeline()
		gets := make([]*goredis.StringSliceCmd, len(slots))
		for i, s := range slots {
			gets[i] = pipe.ClusterGetKeysInSlot(ctx, s, keysBatch)
		}
		_, _ = pipe.Exec(ctx)
		pipe = src.admin.Pipeline()
		var moved []int
		var migrates []*goredis.Cmd
		for i, get := range gets {
			keys, err := get.Result()
			if err != nil {
				return fmt.Errorf("node %d: CLUSTER GETKEYSINSLOT %d: %w", src.index, slots[i], err)
			}
			if len(keys) == 0 {
				continue
			}
			args := make([]any, 0, 8+len(keys))
			args = append(args, "MIGRATE", host, port, "", 0, migrateTimeout, "REPLACE", "KEYS")
			for _, k := range keys {
				args = append(args, k)
			}
			moved = append(moved, slots[i])
			migrates = append(migrates, pipe.Do(ctx, args...))
		}
		if len(migrates) == 0 {
			return nil
		}
		_, _ = pipe.Exec(ctx)
		for i, m := range migrates {
			if err := m.Err(); err != nil {
				return fmt.Errorf("node %d: MIGRATE the keys of slot %d: %w", src.index, moved[i], err)
			}
		}
		slots = moved // the slots that had keys may have more
	}
	return nil
}

// stop kills the nodes, paused ones resumed first, removes their directories and closes
// the clients.
func (c *Cluster) stop() {
	for _, n := range c.nodes {
		if n != nil {
			n.srv.stop()
			_ = n.admin.Close()
		}
	}
}

// freeClusterPort returns a loopback port that is free, and whose cluster bus port (the
// port + 10000) is free too, below the range of ephemeral ports (32768 and up on Linux)
// so that no outgoing connection takes either meanwhile.
func freeClusterPort() (int, error) {
	var err error
	for range 100 {
		port := 10000 + rand.IntN(32768-20000)
		if err = listenable(port); err != nil {
			continue
		}
		if err = listenable(port + 10000); err == nil {
			return port, nil
		}
	}
	return 0, fmt.Errorf("no free port pair for a cluster node: %w", err)
}

// listenable reports, by an error, whether nothing listens on the loopback port.
func listenable(port int) error {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return err
	}
	return ln.Close()
}

// KeySlot returns the cluster hash slot of key, 0 to 16383, as CLUSTER KEYSLOT does: the
// CRC16 (XMODEM) of the key, or of its hash tag (the text between the first { and the
// next }, when not empty), modulo 16384.
func KeySlot(key string) int {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			key = key[open+1 : open+1+end]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % ClusterSlots
}

// sharedCluster is the process's cluster, found or started by the first ClusterAddrs.
var sharedCluster sharedClusterState

type sharedClusterState struct {
	mu sync.Mutex
	foundCluster
}

// foundCluster is what the first ClusterAddrs found.
type foundCluster struct {
	addrs []string
	c     *Cluster // the cluster this process started; nil for REDIS_CLUSTER_ADDRS's
	err   error    // why there is no cluster; ClusterAddrs skips (or fails) every test with it
}

// find returns the shared cluster's master addresses: env's (REDIS_CLUSTER_ADDRS) when
// it names any, or else those of a cluster started once. A failure is kept: later calls
// return it at once.
func (s *sharedClusterState) find(env string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.addrs == nil && s.err == nil {
		if addrs := splitAddrs(env); len(addrs) > 0 {
			s.addrs = addrs
			return slices.Clone(s.addrs), nil
		}
		c, err := startCluster()
		if err != nil {
			s.err = err
		} else {
			s.c, s.addrs = c, c.Addrs()
		}
	}
	return slices.Clone(s.addrs), s.err
}

// stop stops the cluster this process started, if any; the next find starts another.
func (s *sharedClusterState) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c != nil {
		s.c.stop()
		s.c, s.addrs = nil, nil
	}
}

// splitAddrs returns the addresses in a comma-separated list, spaces trimmed, empty ones
// dropped.
func splitAddrs(list string) []string {
	var addrs []string
	for a := range strings.SplitSeq(list, ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	return addrs
}

// ClusterAddrs returns the master addresses of the Redis Cluster that the tests of this
// process share: those in REDIS_CLUSTER_ADDRS (host:port, separated by commas) when it
// names any; or else those of a cluster started by the first call, as StartCluster
// starts one, when redis-server is on PATH (stopped by Main's wrapper when the tests
// end). When there is neither, t skips with a message that says how to make it run, or
// fails when CI=true; a cluster that does not start fails t. Tests that share the
// cluster should use keys of their own. The slice is t's own.
func ClusterAddrs(t testing.TB) []string {
	t.Helper()
	addrs, err := sharedCluster.find(os.Getenv(EnvClusterAddrs))
	if err != nil {
		if _, missing := errors.AsType[*exec.Error](err); missing {
			unavailable(t, UnavailableCluster(err))
			return nil
		}
		t.Fatal(err)
		return nil
	}
	return addrs
}

// UnavailableCluster is the message of a test skipped for want of a Redis Cluster: what
// was missing and how to make the test run.
func UnavailableCluster(err error) string {
	return "no Redis Cluster for this test: install redis-server (a cluster of three is then started " +
		"on free ports for the tests) or set " + EnvClusterAddrs + "=host:port,host:port,... of the " +
		"masters of a running cluster (" + err.Error() + ")"
}
