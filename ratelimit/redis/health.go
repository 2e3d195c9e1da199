package redis

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/sat"
)

// The health of the units that fail: each node of Redis (the server, or the cluster node
// that owns a key's slot), and each limiter's keys. A failure keeps only the keys of its
// unit on the failure policy; one call per probe interval and unit tries it again.

// outage is one unit failing: from a failure until it answers again.
type outage struct {
	// clk is the clock of the limiter that found the unit failing: every limiter measures
	// the probe interval on it, since limiters that share a backend may have clocks with
	// different origins (e.g. manual ones).
	clk     clock.Clock
	probeAt atomic.Int64 // clk's time from which one call may try the unit
}

// newOutage returns an outage found on clk, whose first probe is every from now.
func newOutage(clk clock.Clock, every time.Duration) *outage {
	o := &outage{clk: clk}
	o.probeAt.Store(int64(sat.Add(clk.Now(), every)))
	return o
}

// blocked reports whether o holds a call back: o is set and no probe is due. A call that
// finds a probe due takes it (the next is every later): of the calls that find it due at
// once, one takes it.
func (o *outage) blocked(every time.Duration) bool {
	if o == nil {
		return false
	}
	next := o.probeAt.Load()
	now := o.clk.Now()
	return int64(now) < next || !o.probeAt.CompareAndSwap(next, int64(sat.Add(now, every)))
}

// postpone moves o's next probe to every from now: its probe failed again.
func (o *outage) postpone(every time.Duration) {
	o.probeAt.Store(int64(sat.Add(o.clk.Now(), every)))
}

// nodes is a backend's nodes that are down, by address: copy-on-write, so that calls read
// it without a lock, and empty (nil) while every node answers, the only state in which
// calls pay nothing for it.
type nodes struct {
	mu   sync.Mutex                         // held by writers
	down atomic.Pointer[map[string]*outage] // nil when no node is down
}

// some reports whether some node is down.
func (n *nodes) some() bool { return n.down.Load() != nil }

// of returns the outage of node, nil when it is up.
func (n *nodes) of(node string) *outage {
	if m := n.down.Load(); m != nil {
		return (*m)[node]
	}
	return nil
}

// fail marks node down, found on clk: it returns true when node was up (the caller
// publishes RateLimiterBackendFailed), and otherwise postpones node's next probe.
func (n *nodes) fail(node string, clk clock.Clock, every time.Duration) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	old := n.down.Load()
	if old != nil {
		if o := (*old)[node]; o != nil {
			o.postpone(every)
			return false
		}
	}
	m := make(map[string]*outage, 1)
	if old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	m[node] = newOutage(clk, every)
	n.down.Store(&m)
	return true
}

// up marks node up: it returns true when node was down (the caller publishes
// RateLimiterBackendRecovered). It also forgets the outages whose probe has been due for
// more than a probe interval untaken, which no call has tried since: those of nodes that
// no longer own a key in use, e.g. after a failover or a slot's move, so that the calls
// of a healthy cluster stop paying for them. A call that reaches such a node again tries
// it at once, as a probe would.
func (n *nodes) up(node string, every time.Duration) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	old := n.down.Load()
	if old == nil {
		return false
	}
	_, was := (*old)[node]
	m := make(map[string]*outage, len(*old))
	for k, o := range *old {
		if k != node && o.clk.Now() < sat.Add(time.Duration(o.probeAt.Load()), every) {
			m[k] = o
		}
	}
	if len(m) == 0 {
		n.down.Store(nil)
	} else if len(m) != len(*old) {
		n.down.Store(&m)
	}
	return was
}

// nodeOf returns a function that names the node of a key, within timeout: the address of the cluster
// node that owns its slot in the client's slot map, of the Ring's shard, or of the
// server; nil for a client whose nodes cannot be named, which the backend treats as one
// node, "".
func nodeOf(c goredis.Scripter, timeout time.Duration) func(ctx context.Context, key string) string {
	switch c := c.(type) {
	case *goredis.Client:
		addr := c.Options().Addr
		return func(context.Context, string) string { return addr }
	case *goredis.ClusterClient:
		return func(ctx context.Context, key string) string {
			// The slot map is read from memory once loaded; loading it asks a node, within
			// the timeout.
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			n, err := c.MasterForKey(ctx, key)
			if err != nil {
				return "" // no slot map: the cluster as a whole
			}
			return n.Options().Addr
		}
	case *goredis.Ring:
		return func(_ context.Context, key string) string {
			n, err := c.GetShardClientForKey(key)
			if err != nil {
				return ""
			}
			return n.Options().Addr
		}
	}
	return nil
}
