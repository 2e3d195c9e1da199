package redis

import (
	"context"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/resilience4go/resilience4go/internal/nilcheck"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
)

// LocalShare returns the number of instances expected to share each quota (Instances)
// when the failure policy is Local, and 1 otherwise: the limiters of the Local verdict
// take 1/LocalShare of their quota in-process.
//
// With Heartbeat, it is the count of live instances the backend last saw in Redis (at
// least 1), and Instances only until its first heartbeat is answered. It is read at each
// decision in-process, so a limiter follows the fleet's size as it changes.
func (b *Backend) LocalShare() int {
	if b == nil || b.cfg.OnFailure != backend.Local {
		return 1
	}
	if b.hb != nil {
		return b.hb.share(b.cfg.Instances)
	}
	return b.cfg.Instances
}

// Backend keeps rate limiters' state in Redis (see New): give it to ratelimit.WithBackend,
// to a keyed limiter, or to a registry with resilience.WithRateLimiterBackend. It is safe
// for concurrent use. Call Close when the process no longer needs it.
type Backend struct {
	client goredis.Scripter
	cfg    config
	// bounded: the client bounds its own I/O by the context's deadline
	// (ContextTimeoutEnabled), so a call needs no guard goroutine.
	bounded bool

	// node names the node of a key (see nodeOf); nil when the client's nodes cannot be
	// named: the backend is then one node.
	node func(key string) nodeRef
	// cluster: the client follows a Redis Cluster's redirections (a *redis.ClusterClient),
	// so a MOVED, ASK or TRYAGAIN it gives up on is a slot on the move, not a failure.
	cluster bool
	// The nodes that are down, shared by every limiter and key on this backend, so that
	// a node's outage costs one timeout per probe interval, not one per limiter or key,
	// and the keys of the other nodes stay on Redis.
	down nodes

	// grain is Timeout/16, at most maxGrain: the calls of the limiter's own (see bound)
	// whose deadlines fall in one grain share the context that ends them; 0: none is
	// shared.
	grain time.Duration
	// shared is the last context shared by such calls.
	shared atomic.Pointer[sharedDeadline]

	// hb announces the instance and counts the live ones (see Heartbeat); nil without.
	hb *heartbeat
	ls backendLeases // the leases of the backend's stores (see Leases)
	// admitHook, for tests, learns each admission of a store with leases: its key, its
	// permit time (the process's clock when leased, the server's otherwise), whether it
	// was leased, and its weight.
	admitHook func(key string, at int64, leased bool, n int)
}

// sharedDeadline is a context that ends at the start of one grain, shared by the calls
// of the limiter's own whose deadlines fall in that grain.
type sharedDeadline struct {
	ctx    context.Context
	cancel context.CancelFunc // not called: its timer ends it at its deadline
	n      time.Duration      // its deadline is n·Backend.grain after epoch
}

// maxGrain bounds a Backend's grain.
const maxGrain = time.Millisecond

// epoch is the origin of the shared deadlines, with the monotonic clock's reading.
var epoch = time.Now()

// ownCall is the context of one call of the limiter's own: its deadline, which bounds
// the client's socket I/O, is the call's own, exactly the timeout from its start; its
// end (Done, Err) is the context shared by the calls whose deadlines fall in the same
// grain, which ends at the start of that grain: at most a grain sooner, never later.
type ownCall struct {
	context.Context
	at time.Time
}

// Deadline returns the call's own deadline.
func (c *ownCall) Deadline() (time.Time, bool) { return c.at, true }

// bound returns ctx bounded by the timeout, and its cancel function. A ctx that is
// context.Background() (the limiter's own calls), with a client that bounds its own I/O,
// gets an ownCall: it allocates no timer of its own, and its only wait that its end
// (rather than its deadline) bounds, for a free connection of the client's pool, may end
// up to a grain sooner than the timeout. Any other ctx gets a context of its own, which
// keeps its values and ends with it.
func (b *Backend) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx != context.Background() || b.grain <= 0 || !b.bounded {
		return context.WithTimeout(ctx, b.cfg.Timeout)
	}
	at := time.Now().Add(b.cfg.Timeout)
	n := at.Sub(epoch) / b.grain
	d := b.shared.Load()
	if d == nil || d.n != n {
		c, cancel := context.WithDeadline(context.Background(), epoch.Add(n*b.grain))
		d = &sharedDeadline{ctx: c, cancel: cancel, n: n}
		b.shared.Store(d)
	}
	return &ownCall{Context: d.ctx, at: at}, noCancel
}

func noCancel() {}

var _ backend.Backend = (*Backend)(nil)

// New returns a backend that keeps rate limiters' state in Redis, on client: a
// *redis.Client, *redis.ClusterClient, *redis.Ring or any other redis.Scripter. Give it
// to ratelimit.WithBackend, or to a registry with resilience.WithRateLimiterBackend. New
// does not contact Redis (with Heartbeat, the heartbeat's goroutine does, from its start).
// Errors (*policy.ConfigError): R4C-REG-010 for a nil client (a
// nil *redis.Client too), R4C-ATR-004 for a negative Timeout or ProbeInterval, R4C-ATR-007
// for a zero one, for an OnFailure other than backend.Local, backend.Admitted and
// backend.Refused, or for Instances below 1, and for a Heartbeat as that option says.
//
// The backend is safe for concurrent use, runs no background goroutine but the heartbeat's
// (with Heartbeat) and the runs that reserve leases (with Leases), which Close stops, and
// does not own the client: close the client when done, after Close. Calls are bounded by
// the Timeout option whatever
// the client's settings; a client with ContextTimeoutEnabled bounds them itself, which is
// cheaper: otherwise each call runs on a short-lived goroutine that the caller leaves after
// the timeout, and that ends with the client's own read timeout.
//
// A limiter keeps the same rules as in-process: a burst of Permits, then one permit every
// T = Period/Permits (rounded up to a whole nanosecond, so that rounding never admits
// more than the configured rate), rejection with the limiter's own error matching
// ratelimit.ErrExceeded, reservations within MaxWait, the retry-after of a refused call,
// weighted calls (TryAcquireN, AcquireN, ReserveN), live reconfiguration, canceled
// reservations giving their permits back, and the available permits of its Snapshot
// (Snapshot().AvailablePermits; keyed.Limiter.AvailablePermits(key) for a key). The GCRA
// state, one TAT per limiter name, lives in Redis (see Prefix for its keys), and every
// decision is made by a Lua script run with EVALSHA (EVAL when the server does not know
// the script yet). A lone call is one script run, sent at once: one round trip. Calls of
// one limiter (or one key of a keyed limiter) that come while one of its runs is in
// flight queue, and go together in the next run, up to 64 per run, as soon as that one
// is back: the script decides them one after the other, in their order of arrival, each
// against the TAT the one before left, so each gets exactly the answer it would get
// alone at that instant, and many concurrent calls cost one round trip. A queued call
// whose context ends stops waiting; a permit its run reserved for it is given back. When
// a run fails, each of its calls takes the failure policy, as if it had failed alone.
// Time comes from Redis TIME inside the script, so the clients' clocks may disagree; a
// caller that must wait for its reserved permit waits locally, on its own clock. The
// script's arithmetic is exact: times are (seconds, nanoseconds) pairs of integers, so
// no value ever leaves the range in which Lua's numbers are exact.
//
// A call for n permits takes a slot of n·T of the schedule: at the TAT, which moves by
// n·T, or in the slot of a canceled reservation (below); its permits are free after
// max(slot start, now) - now - (Permits-n)·T, and it is refused, taking nothing, when that
// is more than the call may wait; the retry-after is then that wait. Each call brings the
// limiter's configuration in force, so the rate is the call's, and the TAT key holds the
// rate it is written at. The first call (a reserve, or a read of the available permits)
// that brings another rate converts the schedule in the same script run, as an
// in-process limiter converts it at Reconfigure: what it owes, the part of [now, TAT)
// that granted permits hold (freed slots excepted), is counted in permits of the old
// rate, fractions included, and owed again as that many permits of the new one, or the
// whole permits free at that call stay free when more, within the new burst; the freed
// slots are dropped. So 1 permit per hour, spent, then raised to 10 per second gives its
// next permit within 100ms, and a lowered quota owes its spent permits at its own,
// slower, rate. The same calls give the same answers on Redis and in-process, at the
// instants Redis decides them. The conversion computes in nanoseconds as Lua numbers
// (doubles): exact while Permits·T of both rates and the TAT's lead over now stay below
// 2^53 ns (about 104 days), the conversion of a partial permit from one T to the other
// to within a nanosecond; beyond, rounded to a double. A schedule that owes nothing (no
// key, or a TAT at or before now) admits the new burst at once. Reservations granted
// before a conversion keep their turn, and give nothing back when canceled after it:
// each reservation's grant carries the count of conversions the key had made when it
// was granted (backend.Grant.Epoch), and the cancel gives nothing back when the key's
// count has moved. A key written by an earlier version of this package holds a bare TAT,
// with no rate: it is read at the call's rate, not converted, and written with the rate
// at the next call that moves it. A call that read the old configuration just before the
// change and reaches Redis after the first call at the new one converts the schedule
// back to the old rate, and the next call at the new rate converts it again: each
// conversion keeps what is owed, within the burst of its rate, but not the freed slots.
// The limiter's in-process share, used while Redis is down with the Local policy, is
// converted at Reconfigure.
//
// A canceled reservation gives its permits back as long as their time has not passed on
// the server's clock: when it is the last one reserved (the TAT is its end), the TAT moves
// back to its start, and on over a freed slot that ends there; when later reservations
// stand behind it, its slot, from now on, is kept as a freed slot, and the next call that
// fits there (the earliest freed slot that holds its n·T, and whose permit time is within
// its wait) takes it before appending at the TAT. Every permit so holds a slot that no
// other holds, starting at or after its permit time and ending at most Permits·T after
// it, so that no window of length d sees more than Permits + floor(d/T) permits. At most
// 16 freed slots are kept per limiter (freed slots that touch are joined): a cancel that
// would make one more gives nothing back.
//
// Every limiter, in every process, that uses the same name and the same prefix shares
// one quota; they must be configured with the same Permits and Period. While a change of
// configuration reaches them one by one, each call is decided at its own limiter's rate,
// on the one shared TAT, converted to that rate when the key was written at another: so
// instances configured differently for one name convert the key back and forth at every
// call that alternates between them, each conversion dropping the freed slots and
// rounding what is owed within the burst of its rate; their quota is then neither one
// nor the other.
//
// Further windows (ratelimit.Windows, up to 3) work on Redis as in-process: each window's
// TAT is a key of its own (see Prefix), and a call with windows is one script run, one
// round trip, that reads every TAT, decides them together (the call waits the longest of
// their waits, within MaxWait, and takes from all of them or from none; a refusal's
// retry-after is that longest wait) and writes those that moved; the available permits
// are the fewest over the windows. The same calls give the same answers as in-process
// at the instants Redis decides them. The cost is one more key per window, read and
// written by the same run, and a few more arguments: no more round trips and no more
// allocations per call. A canceled reservation gives its permits back on each window
// where it is still the last one, for the 4 latest reservations with windows of each
// limiter instance (the windows' slots are kept in the process, as an in-process limiter
// keeps them), and on Permits per Period as without windows; freed slots are not taken
// while windows are on, as in-process. While Redis is down with the Local policy, a
// Limiter keeps its windows in-process at its local share; a keyed limiter's keys keep
// Permits per Period alone there.
//
// On Redis Cluster, the braces of the TAT key make "prefix + name" its hash tag: a
// limiter's two keys live in one slot, which every script call touches alone, so the
// backend works unchanged on a cluster, and the limiters (and the keys of a keyed
// limiter) spread over the slots by name. When a slot moves (resharding), the client
// follows the cluster's MOVED and ASK redirections, and the script runs where the keys
// are, with no quota lost. With a *redis.ClusterClient, a call whose slot is still moving
// once the client's redirections ran out (MOVED, ASK, or TRYAGAIN during a migration)
// runs the script again, up to 3 more times within the timeout, and then takes the
// failure policy alone: the nodes answered, so none is marked down and no event is
// published. A client that does not follow redirections (a *redis.Client of one cluster
// node) gets them on every call: a failure of that node. When a master fails and a
// replica takes over, its keys' calls take the failure policy until the client's slot
// map names the new master. A cluster that must keep serving the healthy nodes' slots
// while one node is down needs cluster-require-full-coverage no: otherwise Redis itself
// refuses every key once a slot has no node. Give the ClusterClient
// ContextTimeoutEnabled, so that Timeout bounds each call without a helper goroutine.
func New(client goredis.Scripter, opts ...Option) (*Backend, error) {
	if nilcheck.Is(client) {
		return nil, r4c.Errorf(r4c.BadSpec, "redis.client", "", "a Redis client is required")
	}
	cfg := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	_, cluster := client.(*goredis.ClusterClient)
	b := &Backend{client: client, cfg: cfg, bounded: boundsItself(client), node: nodeOf(client), cluster: cluster,
		grain: min(cfg.Timeout/16, maxGrain)}
	if cfg.OnFailure == backend.Local {
		b.hb = startHeartbeat(client, cfg)
	}
	return b, nil
}

// boundsItself reports whether the client's socket I/O honours the context's deadline.
func boundsItself(c goredis.Scripter) bool {
	switch c := c.(type) {
	case *goredis.Client:
		return c.Options().ContextTimeoutEnabled
	case *goredis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	case *goredis.Ring:
		return c.Options().ContextTimeoutEnabled
	}
	return false
}

// nodeOf returns the node that holds key, from memory: "" when the client's nodes cannot
// be named, or the cluster's slot map is not loaded.
func (b *Backend) nodeOf(key string) nodeRef {
	if b.node == nil {
		return nodeRef{}
	}
	return b.node(key)
}

// key returns the Redis key of the limiter named name: "{" + prefix + name + "}".
func (b *Backend) key(name string) string { return "{" + b.cfg.Prefix + name + "}" }

// Bind returns the store of one limiter, keyed by its id (its Name). It does not contact
// Redis. Its error (*policy.ConfigError), which fails the limiter's build, is R4C-REG-010
// for a backend not made by New.
func (b *Backend) Bind(bd backend.Binding) (backend.Store, error) {
	if b == nil || b.client == nil {
		return nil, r4c.Errorf(r4c.BadSpec, "redis.backend", "", "a backend made by redis.New is required")
	}
	return newStore(b, bd), nil
}

// Close ends the backend's use by this process. It is safe to call more than once and from
// several goroutines, and it does not close the client: close the client after it. With
// Leases, it stops reserving leases, waits for the runs that reserve one, and gives back to
// Redis the slots of its leases that have not started yet; the limiters decide every later
// call on Redis. With Heartbeat, it stops the heartbeat's goroutine, waits for it, and
// removes the instance from the live instances in Redis (best effort, within Timeout), so
// that the others drop it from their share at their next beat. It returns nil.
func (b *Backend) Close() error {
	if b == nil {
		return nil
	}
	b.closeLeases()
	if b.hb != nil {
		b.hb.close()
	}
	return nil
}
