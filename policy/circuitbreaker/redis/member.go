package redis

import (
	"context"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker/internal/fleet"
)

// member is one breaker's membership: its key and channel (keys[0], keys[1]).
type member struct {
	f      *Fleet
	keys   []string
	follow func(fleet.State, bool)
	ps     *goredis.PubSub
	// stale says that the fleet did not answer the last exchange: the key is read again
	// until it does, and the breaker takes the fleet's state.
	stale atomic.Bool
	// pending counts the proposals handed over and not yet sent; last is the state the
	// last applied one entered (the sender's goroutine's own).
	pending atomic.Int64
	last    fleet.State
}

// Propose hands a transition to the fleet's sender without waiting; with the queue full
// it is dropped, and the key is read again instead.
func (m *member) Propose(from fleet.State, to string) {
	m.pending.Add(1)
	select {
	case m.f.proposals <- proposal{m: m, from: from, to: to}:
	default:
		m.pending.Add(-1)
		m.stale.Store(true)
	}
}

// propose sends p, on the sender's goroutine. A transition the breaker made from the state
// its own previous proposal entered is sent from the epoch that proposal got (the
// breaker did not know it yet). The breaker follows the answer: the key's state when the
// proposal lost; when it was applied, its epoch, unless the breaker has made further
// transitions since, whose proposals follow.
func (m *member) propose(p proposal) {
	defer m.pending.Add(-1)
	from := p.from
	if m.last.State == from.State && m.last.Epoch > from.Epoch {
		from.Epoch = m.last.Epoch
	}
	ctx, cancel := context.WithTimeout(m.f.ctx, m.f.timeout)
	defer cancel()
	applied, s, err := reply(proposeScript.Run(ctx, m.f.client, m.keys, from.State, from.Epoch, p.to).Result())
	switch {
	case err != nil:
		m.stale.Store(true)
	case !applied:
		m.follow(s, true)
	default:
		m.last = s
		if m.pending.Load() == 1 {
			m.follow(s, false)
		}
	}
}

// Trial takes a half-open trial ticket (see fleet.Member).
func (m *member) Trial(ctx context.Context, epoch uint64, permitted int) (fleet.State, bool, error) {
	ctx, cancel := m.bound(ctx)
	defer cancel()
	granted, s, err := reply(trialScript.Run(ctx, m.f.client, m.keys, epoch, permitted).Result())
	if err != nil {
		m.stale.Store(true)
	}
	return s, granted, err
}

// Record counts a trial's outcome (see fleet.Member).
func (m *member) Record(ctx context.Context, epoch uint64, o fleet.Outcome) (fleet.State, error) {
	ctx, cancel := m.bound(ctx)
	defer cancel()
	_, s, err := reply(recordScript.Run(ctx, m.f.client, m.keys, epoch,
		bit(o.Failed), bit(o.Slow), bit(o.Ignored), o.Permitted, o.FailedToOpen, o.SlowToOpen).Result())
	if err != nil {
		m.stale.Store(true)
	}
	return s, err
}

// bound returns the call's context bounded by the fleet's timeout, without its
// cancellation: a trial whose caller gives up is still counted.
func (m *member) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), m.f.timeout)
}

func bit(b bool) int {
	if b {
		return 1
	}
	return 0
}

// read reads the key and hands its state to the breaker, which takes it (the fleet
// wins); a failure leaves the member stale.
func (m *member) read() {
	ctx, cancel := context.WithTimeout(m.f.ctx, m.f.timeout)
	defer cancel()
	v, err := m.f.client.HMGet(ctx, m.keys[0], "s", "e").Result()
	if err != nil {
		m.stale.Store(true)
		return
	}
	s := fleet.State{State: circuitbreaker.Closed}
	if st, ok := v[0].(string); ok {
		s.State = st
	}
	if ep, ok := v[1].(string); ok {
		if p, ok := parseMessage("x " + ep); ok {
			s.Epoch = p.Epoch
		}
	}
	m.stale.Store(false)
	if m.pending.Load() == 0 {
		// Otherwise a transition of the breaker's own is on its way: its answer says.
		m.follow(s, true)
	}
}

// listen follows the name's channel until the fleet closes: each transition announced is
// handed to the breaker, and each (re)subscription reads the key (the first also loads
// the scripts, see Fleet.load). After a broken
// connection it waits retryEvery before receiving again (which reconnects).
func (m *member) listen() {
	defer m.f.wg.Done()
	ctx := m.f.ctx
	if err := m.ps.SSubscribe(ctx, m.keys[1]); err != nil {
		m.stale.Store(true)
	}
	for {
		msg, err := m.ps.Receive(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			m.stale.Store(true)
			select {
			case <-ctx.Done():
				return
			case <-time.After(retryEvery):
			}
			continue
		}
		switch msg := msg.(type) {
		case *goredis.Subscription:
			m.f.load()
			m.read()
		case *goredis.Message:
			if s, ok := parseMessage(msg.Payload); ok {
				m.follow(s, false)
			}
		}
	}
}
