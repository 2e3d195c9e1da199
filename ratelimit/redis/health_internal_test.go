package redis

import (
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
)

// healthLog records health events.
type healthLog struct {
	mu  sync.Mutex
	evs []policy.Event
}

func (h *healthLog) add(e policy.Event) { h.mu.Lock(); h.evs = append(h.evs, e); h.mu.Unlock() }

// all returns the events so far.
func (h *healthLog) all() []policy.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]policy.Event(nil), h.evs...)
}

// seq returns the health events so far as "F:node", "R:node" and "K:key".
func (h *healthLog) seq() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.evs))
	for _, e := range h.evs {
		switch e.Kind {
		case backend.EventFailed:
			out = append(out, "F:"+eventNode(e))
		case backend.EventRecovered:
			out = append(out, "R:"+eventNode(e))
		case backend.EventKeyFailed:
			out = append(out, "K:"+e.Key)
		}
	}
	return out
}

// healthStore returns a store whose health events go to log, on clk, probing every.
func healthStore(clk clock.Clock, every time.Duration, log *healthLog) *store {
	return &store{b: &Backend{cfg: config{ProbeInterval: every}}, id: "geocoding", clk: clk, listener: log.add}
}

// SPEC RL-18: each node's outage is its own: marking one down leaves the others up, one
// call per probe interval and node tries it again, and the first answer marks it up; one
// Failed and one Recovered per node and outage, each naming its node.
func TestRL18_NodesFailAndRecoverOneByOne(t *testing.T) {
	const every = time.Second
	clk := clock.NewManual()
	var log healthLog
	s := healthStore(clk, every, &log)
	var n nodes
	assert.False(t, n.some())
	assert.Nil(t, n.of("a"))

	boom := errors.New("i/o timeout")
	n.fail(nodeRef{name: "a"}, s, boom)
	n.fail(nodeRef{name: "a"}, s, boom) // already down: no second event
	assert.True(t, n.some())
	assert.NotNil(t, n.of("a"))
	assert.Nil(t, n.of("b"), "b stays up")

	assert.True(t, n.of("a").blocked(every), "no probe due")
	clk.Advance(every)
	assert.False(t, n.of("a").blocked(every), "one call takes the probe")
	assert.True(t, n.of("a").blocked(every), "the next waits for the one after")

	n.fail(nodeRef{name: "b"}, s, boom)
	n.up("a", s)
	n.up("a", s) // already up: no second event
	assert.Nil(t, n.of("a"))
	assert.NotNil(t, n.of("b"), "b is still down")
	n.up("b", s)
	assert.False(t, n.some(), "all up: the calls pay nothing for node health")
	assert.Equal(t, []string{"F:a", "F:b", "R:a", "R:b"}, log.seq())
	log.mu.Lock()
	assert.Equal(t, policy.Event{Kind: backend.EventFailed, Instance: "geocoding", Attrs: nodeAttrs("a"), Err: boom}, log.evs[0])
	log.mu.Unlock()
}

// SPEC RL-18: a failure while a node is down postpones its probe a whole interval.
func TestRL18_FailureWhileDownPostponesTheProbe(t *testing.T) {
	const every = time.Second
	clk := clock.NewManual()
	var log healthLog
	s := healthStore(clk, every, &log)
	var n nodes
	n.fail(nodeRef{name: "a"}, s, nil)
	clk.Advance(every - time.Millisecond)
	n.fail(nodeRef{name: "a"}, s, nil) // the probe failed again
	clk.Advance(time.Millisecond)
	assert.True(t, n.of("a").blocked(every), "the next probe is an interval after the last failure")
	clk.Advance(every)
	assert.False(t, n.of("a").blocked(every))
	assert.Equal(t, []string{"F:a"}, log.seq())
}

// SPEC RL-18: a node stays down until it answers, however long no call tries it (so its
// Failed is always followed by its Recovered); the backend as a whole (""), down when a
// cluster's nodes could not be named, is up again as soon as any node answers.
// (Fault: an outage untried for an interval was forgotten, and a later failure of that
// node published a second Failed with no Recovered between.)
func TestRL18_DownUntilItAnswers(t *testing.T) {
	const every = time.Second
	clk := clock.NewManual()
	var log healthLog
	s := healthStore(clk, every, &log)
	var n nodes
	n.fail(nodeRef{name: "gone"}, s, nil)
	n.fail(nodeRef{name: ""}, s, nil)
	clk.Advance(10 * every)
	n.up("a", s) // a was never down: the whole backend answered
	assert.Nil(t, n.of(""))
	assert.NotNil(t, n.of("gone"), "kept until it answers")
	n.fail(nodeRef{name: "gone"}, s, nil)
	n.up("gone", s)
	assert.False(t, n.some())
	assert.Equal(t, []string{"F:gone", "F:", "R:", "R:gone"}, log.seq())
}

// SPEC RL-18: with many calls failing and answering at once, each node's events still
// alternate, Failed then Recovered, in the order of the changes they report; a listener
// that calls the backend again does not deadlock. (Fault: events were published after the
// lock was released, and two Recovered of one node could reach a listener in a row.)
func TestRL18_EventsInTheOrderOfTheChanges(t *testing.T) {
	const every = time.Second
	clk := clock.NewManual()
	var log healthLog
	var n nodes
	s := healthStore(clk, every, &log)
	reentrant := s.listener
	s.listener = func(e policy.Event) {
		reentrant(e)
		if e.Kind == backend.EventRecovered && eventNode(e) == "a" {
			n.up("b", s) // a listener's call answered by node b
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				node := []string{"a", "b"}[(g+i)%2]
				if (g*7+i*3)%5 < 2 {
					n.fail(nodeRef{name: node}, s, nil)
				} else {
					n.up(node, s)
				}
			}
		})
	}
	wg.Wait()
	last := map[string]string{}
	seq := log.seq()
	require.NotEmpty(t, seq)
	for i, e := range seq {
		kind, node := e[:1], e[2:]
		if kind == "R" {
			require.Equal(t, "F", last[node], "event %d: Recovered of %s without a Failed before it", i, node)
		} else {
			require.NotEqual(t, "F", last[node], "event %d: a second Failed of %s", i, node)
		}
		last[node] = kind
	}
	n.mu.Lock()
	assert.Empty(t, n.pending)
	assert.False(t, n.publishing)
	n.mu.Unlock()
}

// eventNode returns the node a backend's event names; "" for the backend as a whole.
func eventNode(e policy.Event) string {
	if v := e.Attr("node"); v.Kind() == slog.KindString {
		return v.String()
	}
	return ""
}
