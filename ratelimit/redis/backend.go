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
func (b *redisBackend) LocalShare() int {
	if b == nil || b.cfg.OnFailure != backend.Local {
		return 1
	}
	return b.cfg.Instances
}

// redisBackend keeps rate limiters' state in Redis (see New).
type redisBackend struct {
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
func (b *redisBackend) bound(ctx context.Context) (context.Context, context.CancelFunc) {
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

var _ backend.Backend = (*redisBackend)(nil)

// New returns a backend that keeps rate limiters' state in Redis, on client: a
// *redis.Client, *redis.ClusterClient, *redis.Ring or any other redis.Scripter. Give it
// to ratelimit.WithBackend, or to a registry with resilience.WithRateLimiterBackend. New
// does not contact Redis. Errors (*policy.ConfigError): R4C-REG-010 for a nil client (a
// nil *redis.Client too), R4C-ATR-004 for a negative Timeout or ProbeInterval, R4C-ATR-007
// for a zero one, for an OnFailure other than backend.Local, backend.Admitted and
// backend.Refused, or for Instances below 1.
//
// The backend is safe for concurrent use, runs no background goroutine, and does not own
// the client: close the client when done. Calls are bounded by the Timeout option whatever
// the client's settings; a client with ContextTimeoutEnabled bounds them itself, which is
// cheaper: otherwise each call runs on a short-lived goroutine that the caller leaves after
// the timeout, and that ends with the client's own read timeout.
func New(client goredis.Scripter, opts ...Option) (backend.Backend, error) {
	b, err := newBackend(client, opts...)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// newBackend is New, returning the backend itself.
func newBackend(client goredis.Scripter, opts ...Option) (*redisBackend, error) {
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
	return &redisBackend{client: client, cfg: cfg, bounded: boundsItself(client), node: nodeOf(client), cluster: cluster,
		grain: min(cfg.Timeout/16, maxGrain)}, nil
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
func (b *redisBackend) nodeOf(key string) nodeRef {
	if b.node == nil {
		return nodeRef{}
	}
	return b.node(key)
}

// key returns the Redis key of the limiter named name: "{" + prefix + name + "}".
func (b *redisBackend) key(name string) string { return "{" + b.cfg.Prefix + name + "}" }

// Bind returns the store of one limiter, keyed by its id (its Name). It does not contact
// Redis. Its error (*policy.ConfigError), which fails the limiter's build, is R4C-REG-010
// for a backend not made by New.
func (b *redisBackend) Bind(bd backend.Binding) (backend.Store, error) {
	if b == nil || b.client == nil {
		return nil, r4c.Errorf(r4c.BadSpec, "redis.backend", "", "a backend made by redis.New is required")
	}
	return newStore(b, bd), nil
}
