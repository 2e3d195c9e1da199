package redis

import (
	"context"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
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
	// client is the node's own client, which a call of another node pings when the
	// node's probe is due (see nodes.probeIdle); nil for a limiter's keys, and for a node
	// that cannot be named.
	client *goredis.Client
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
// calls pay nothing for it. A node stays down until it answers: its backend.EventFailed
// is always followed, when it answers again, by its backend.EventRecovered.
type nodes struct {
	mu   sync.Mutex                         // held by writers, and for the notices below
	down atomic.Pointer[map[string]*outage] // nil when no node is down

	// The health events, queued under mu in the order of the changes they report, and
	// published in that order by one caller at a time, outside mu (a listener may call
	// the limiters again).
	pending    []notice
	publishing bool
}

// notice is a health event and the listener it goes to.
type notice struct {
	l  policy.Listener
	ev policy.Event
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

// fail marks node down, found by s's call that failed with err: when node was up, it
// publishes backend.EventFailed through s's listener; otherwise it postpones node's
// next probe.
func (n *nodes) fail(node nodeRef, s *store, err error) {
	every := s.b.cfg.ProbeInterval
	n.mu.Lock()
	old := n.down.Load()
	if old != nil {
		if o := (*old)[node.name]; o != nil {
			o.postpone(every)
			n.mu.Unlock()
			return
		}
	}
	m := make(map[string]*outage, 1)
	if old != nil {
		maps.Copy(m, *old)
	}
	o := newOutage(s.clk, every)
	o.client = node.client
	m[node.name] = o
	n.down.Store(&m)
	n.pending = append(n.pending, notice{s.listener, policy.Event{Kind: backend.EventFailed,
		Instance: s.id, Key: s.key, At: s.clk.Now(), Err: err, Attrs: nodeAttrs(node.name)}})
	n.mu.Unlock()
	n.flush()
}

// up marks node up after s's call was answered, and with it "" (the backend as a whole,
// when its nodes could not be named): for each that was down, it publishes
// backend.EventRecovered through s's listener. A call that finds neither down takes
// no lock.
func (n *nodes) up(node string, s *store) {
	m := n.down.Load()
	if m == nil || ((*m)[node] == nil && (*m)[""] == nil) {
		return
	}
	n.mu.Lock()
	old := n.down.Load()
	if old == nil {
		n.mu.Unlock()
		return
	}
	now := s.clk.Now()
	m2 := make(map[string]*outage, len(*old))
	for k, o := range *old {
		if k == node || k == "" {
			n.pending = append(n.pending, notice{s.listener, policy.Event{Kind: backend.EventRecovered,
				Instance: s.id, Key: s.key, At: now, Attrs: nodeAttrs(k)}})
			continue
		}
		m2[k] = o
	}
	if len(m2) == 0 {
		n.down.Store(nil)
	} else if len(m2) != len(*old) {
		n.down.Store(&m2)
	}
	n.mu.Unlock()
	n.flush()
}

// flush publishes the queued notices, in order, unless another caller is publishing them
// already: it then publishes these too before it returns, so that a call's event may reach
// the listener on another goroutine, just after the call returns. When a listener panics,
// the notices after its own stay queued for the next flush.
func (n *nodes) flush() {
	n.mu.Lock()
	if n.publishing || len(n.pending) == 0 {
		n.mu.Unlock()
		return
	}
	n.publishing = true
	var batch []notice // the notices taken and not yet published
	defer func() {
		if batch != nil { // a listener panicked: the others' notices go back, first in line
			n.mu.Lock()
			n.pending = append(batch, n.pending...)
			n.publishing = false
			n.mu.Unlock()
		}
	}()
	for len(n.pending) > 0 {
		batch = n.pending
		n.pending = nil
		n.mu.Unlock()
		for len(batch) > 0 {
			p := batch[0]
			batch = batch[1:]
			if p.l != nil {
				p.l(p.ev)
			}
		}
		batch = nil
		n.mu.Lock()
	}
	n.publishing = false
	n.mu.Unlock()
}

// probeIdle pings, from a call of node self that was answered, each other node that is
// down and whose probe is due: a node to which no call goes any more (its slots moved
// away, or a replica took its place) so learns that it answers, within one probe
// interval, and the calls stop paying for its outage. The ping is that node's probe,
// bounded by the timeout, on this call's time, as every probe is. Only for a client that
// bounds its own I/O by the context (a ping has no guard goroutine).
func (n *nodes) probeIdle(self string, s *store) {
	m := n.down.Load()
	if m == nil || !s.b.bounded {
		return
	}
	every := s.b.cfg.ProbeInterval
	for name, o := range *m {
		if name == self || o.client == nil || o.blocked(every) {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.b.cfg.Timeout)
		err := o.client.Ping(ctx).Err()
		cancel()
		if err == nil {
			n.up(name, s)
		} else {
			n.fail(nodeRef{name: name}, s, err) // down still: the next probe is an interval away
		}
	}
}

// nodeRef names a node and holds its own client, when the backend's client has one per
// node.
type nodeRef struct {
	name   string
	client *goredis.Client
}

// ended is a context that has ended: a lookup of a cluster's slot map with it never goes
// to the network.
var ended = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// nodeOf returns a function that finds the node of a key, from memory, without waiting:
// the cluster node that owns its slot in the client's slot map, the Ring's shard, or the
// server; nil for a client whose nodes cannot be named, which the backend treats as one
// node, "".
func nodeOf(c goredis.Scripter) func(key string) nodeRef {
	switch c := c.(type) {
	case *goredis.Client:
		n := nodeRef{name: c.Options().Addr, client: c}
		return func(string) nodeRef { return n }
	case *goredis.ClusterClient:
		return func(key string) nodeRef {
			// With an ended context, a slot map not loaded yet is not loaded here: the
			// key's node is then unknown, "" (the cluster as a whole).
			n, err := c.MasterForKey(ended, key)
			if err != nil {
				return nodeRef{}
			}
			return nodeRef{name: n.Options().Addr, client: n}
		}
	case *goredis.Ring:
		return func(key string) nodeRef {
			n, err := c.GetShardClientForKey(key)
			if err != nil {
				return nodeRef{}
			}
			return nodeRef{name: n.Options().Addr, client: n}
		}
	}
	return nil
}

// answered marks the keys' node up after any answer: the first after a failure
// publishes backend.EventRecovered, naming the node; and it probes the other nodes
// down whose probe is due (nodes.probeIdle). known says whether node was looked up
// before the call.
func (s *store) answered(node nodeRef, known bool) {
	if !s.b.down.some() {
		return
	}
	if !known {
		node = s.node(true)
	}
	s.b.down.up(node.name, s)
	s.b.down.probeIdle(node.name, s)
}

// fail marks the keys' node down: its next probe is one interval away, on the clock of
// the limiter that found it down. The first failure after a success publishes
// backend.EventFailed, naming the node.
func (s *store) fail(node nodeRef, known bool, err error) {
	if !known {
		node = s.node(true)
	}
	s.b.down.fail(node, s, err)
}

// keyFailed marks the keys bad: their next try is one interval away. The first data error
// after a good answer publishes backend.EventKeyFailed with the key.
func (s *store) keyFailed(err error) {
	if o := s.keyBad.Load(); o != nil {
		o.postpone(s.b.cfg.ProbeInterval)
		return
	}
	o := newOutage(s.clk, s.b.cfg.ProbeInterval)
	if s.keyBad.CompareAndSwap(nil, o) && s.listener != nil {
		s.listener(policy.Event{Kind: backend.EventKeyFailed, Instance: s.id, At: s.clk.Now(),
			Key: s.keys[0], Err: err})
	}
}

// nodeAttrs returns the attributes of backend.EventFailed and backend.EventRecovered for
// node: "node", its name; none for "" (the node could not be named).
func nodeAttrs(node string) policy.EventAttrs {
	if node == "" {
		return policy.EventAttrs{}
	}
	return policy.EventAttrs{slog.String("node", node)}
}
