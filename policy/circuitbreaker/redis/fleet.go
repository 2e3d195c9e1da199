package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker/internal/fleet"
)

// Fleet is a circuit breaker fleet on Redis: give it to circuitbreaker.WithFleet. It is
// safe for concurrent use. Close stops it.
type Fleet struct {
	client  goredis.UniversalClient
	prefix  string
	timeout time.Duration

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// proposals are the transitions the breakers handed over, sent by one goroutine.
	proposals chan proposal

	mu      sync.Mutex
	members []*member
	closed  bool

	// loaded: the scripts were loaded into Redis once, so that a breaker's first transition
	// runs its script by its digest (one round trip), not after a NOSCRIPT answer.
	loaded atomic.Bool
}

// proposal is a transition a breaker made by itself, for the fleet to apply.
type proposal struct {
	m    *member
	from fleet.State
	to   string
}

// queueSize bounds the transitions waiting to be sent: past it, a breaker's proposal is
// dropped and its member reads the fleet's state again instead.
const queueSize = 256

// retryEvery is how often a member whose fleet did not answer reads the key again.
const retryEvery = 100 * time.Millisecond

// Option configures a Fleet.
type Option func(*Fleet)

// Prefix sets the prefix of the keys and channels: a breaker named n has its state in
// the key "{<prefix>n}" and its transitions on the channel "{<prefix>n}:t" (one hash
// slot for both). Default "r4c:cb:".
func Prefix(p string) Option { return func(f *Fleet) { f.prefix = p } }

// Timeout bounds each exchange with Redis: a trial's ticket and outcome, a transition
// sent, a key read. The client must have ContextTimeoutEnabled for it to bound a
// call (otherwise the client's own read and write timeouts do). Default 100ms. Not
// positive fails with R4C-ATR-007.
func Timeout(d time.Duration) Option { return func(f *Fleet) { f.timeout = d } }

// New returns a fleet on client (a *goredis.Client, or a *goredis.ClusterClient; Redis
// 7.0 or later, for sharded Pub/Sub) and starts the goroutine that sends the breakers'
// transitions. Each breaker that joins it starts one more, which follows its name's
// channel. Close stops them; it does not close the client. A bad option returns a
// *policy.ConfigError.
func New(client goredis.UniversalClient, opts ...Option) (*Fleet, error) {
	f := &Fleet{client: client, prefix: "r4c:cb:", timeout: 100 * time.Millisecond}
	for _, o := range opts {
		o(f)
	}
	if client == nil {
		return nil, r4c.Errorf(r4c.BadSpec, "client", "", "a fleet needs a Redis client")
	}
	if f.timeout <= 0 {
		return nil, r4c.Errorf(r4c.OutOfRange, "timeout", f.timeout.String(), "the timeout must be positive")
	}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	f.proposals = make(chan proposal, queueSize)
	f.wg.Add(1)
	go f.send()
	return f, nil
}

// Close stops the fleet's goroutines and waits for them; the breakers that joined it go
// on alone. Idempotent.
func (f *Fleet) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	f.cancel()
	for _, m := range f.members {
		if m.ps != nil {
			_ = m.ps.Close()
		}
	}
	f.mu.Unlock()
	f.wg.Wait()
	return nil
}

// load loads the fleet's scripts into Redis (every master of a cluster), once it has
// succeeded; each script still falls back to sending its source if Redis lost it.
func (f *Fleet) load() {
	if f.loaded.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(f.ctx, f.timeout)
	defer cancel()
	for _, sc := range []*goredis.Script{proposeScript, trialScript, recordScript} {
		if sc.Load(ctx, f.client).Err() != nil {
			return
		}
	}
	f.loaded.Store(true)
}

// Join makes a breaker named name a member: see circuitbreaker.Fleet. Its goroutine
// subscribes to the name's channel and reads the key once subscribed (again after every
// reconnection, which may have missed transitions). After Close it fails.
func (f *Fleet) Join(name string, follow func(fleet.State, bool)) (fleet.Member, error) {
	key := "{" + f.prefix + name + "}"
	m := &member{f: f, keys: []string{key, key + ":t"}, follow: follow}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, errors.New("circuit breaker fleet: closed")
	}
	m.ps = f.client.SSubscribe(f.ctx)
	f.members = append(f.members, m)
	f.wg.Add(1)
	go m.listen()
	return m, nil
}

// send runs the proposals, one after the other, and reads again the keys of the members
// whose fleet did not answer, every retryEvery, until it does.
func (f *Fleet) send() {
	defer f.wg.Done()
	tick := time.NewTicker(retryEvery)
	defer tick.Stop()
	for {
		select {
		case <-f.ctx.Done():
			return
		case p := <-f.proposals:
			p.m.propose(p)
		case <-tick.C:
			f.mu.Lock()
			ms := f.members
			f.mu.Unlock()
			for _, m := range ms {
				if m.stale.Load() {
					m.read()
				}
			}
		}
	}
}

// parseState reads a script's reply or a message's "<state> <epoch>".
func parseState(st string, ep int64) fleet.State {
	return fleet.State{State: st, Epoch: uint64(max(ep, 0))}
}

func parseMessage(payload string) (fleet.State, bool) {
	st, ep, ok := strings.Cut(payload, " ")
	n, err := strconv.ParseUint(ep, 10, 64)
	return fleet.State{State: st, Epoch: n}, ok && err == nil
}

// reply reads a script's reply {flag, state, epoch}.
func reply(v any, err error) (ok bool, s fleet.State, _ error) {
	if err != nil {
		return false, s, err
	}
	a, _ := v.([]any)
	if len(a) != 3 {
		return false, s, fmt.Errorf("circuit breaker fleet: unexpected reply %v", v)
	}
	flag, _ := a[0].(int64)
	st, _ := a[1].(string)
	ep, _ := a[2].(int64)
	return flag == 1, parseState(st, ep), nil
}
