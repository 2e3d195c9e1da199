package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/gcra"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// store is one limiter's state in Redis: its keys, its TAT's and its freed slots'. Whether
// Redis is known to be down is the backend's, shared by all its stores; whether the keys
// hold values the script cannot use is the store's own. The rate is not the store's: each
// call brings the limiter's configuration in force, so a limiter reconfigured while it
// runs keeps its TAT and takes its new rate from the next call.
type store struct {
	b        *Backend
	keys     []string // the limiter's TAT key and its freed-slots key
	id       string   // the limiter's instance id, without a Keyed limiter's key
	key      string   // a Keyed limiter's key, as its events name it; "" otherwise
	clk      clock.Clock
	listener policy.Listener

	// The keys' own health. A data error (a key holds a list, or a string that is not a
	// TAT or freed slots) says nothing about Redis, which answered: it keeps this limiter
	// on the failure policy and leaves every other key and limiter on Redis.
	keyBad atomic.Pointer[outage] // nil while the keys' last answer was not a data error

	nodeAt atomic.Pointer[cachedNode] // the keys' node, looked up while some node is down

	last atomic.Pointer[rateArgs] // the arguments of the last Reserve's rate and weight
}

// rateArgs is what the script's reserve takes for n permits at one rate: inc = n·T and
// tol = (Permits-n)·T as pairs, boxed once, so that the calls of a limiter at one rate
// and weight box nothing for them.
type rateArgs struct {
	permits int
	period  time.Duration
	n       int
	t       int64  // T in ns, the emission interval, rounded up
	args    [4]any // inc and tol as pairs
}

// argsOf returns the arguments for n permits at the rate of c: the last call's when they
// are the same, else new ones, which the next call can take again.
func (s *store) argsOf(c ratelimit.Config, n int) *rateArgs {
	if a := s.last.Load(); a != nil && a.n == n && a.permits == c.Permits && a.period == c.Period {
		return a
	}
	t, inc, tol := weight(c, n)
	iS, iN := split(inc)
	lS, lN := split(tol)
	a := &rateArgs{permits: c.Permits, period: c.Period, n: n, t: t, args: [4]any{iS, iN, lS, lN}}
	s.last.Store(a)
	return a
}

var _ ratelimit.Store = (*store)(nil)

func newStore(b *Backend, bd ratelimit.Binding) *store {
	clk := bd.Clock
	if clk == nil {
		clk = clock.System()
	}
	key, id := b.Key(bd.ID), bd.ID
	if bd.Keyed {
		id = strings.TrimSuffix(id, ":"+bd.Key)
	}
	return &store{b: b, keys: []string{key, key + freedSuffix}, id: id, key: bd.Key, clk: clk, listener: bd.Listener}
}

// freedSuffix ends the name of a limiter's freed-slots key, after its TAT key: the same
// hash tag, so a Redis Cluster keeps both in one slot.
const freedSuffix = ":freed"

// weight returns, for a call for n permits at the rate of c, the stretch of the schedule it
// takes, n·T, and its tolerance, (Permits-n)·T, with T = c.EmissionInterval().
func weight(c ratelimit.Config, n int) (t, inc, tol int64) {
	t = int64(c.EmissionInterval())
	return t, satMul(int64(n), t), satMul(int64(c.Permits-n), t)
}

// Reserve runs the script's reserve for req.N permits at the rate of req.Config: one round
// trip. A nil or done ctx is not sent: its error (policy.ErrNilContext for a nil one) is
// returned at once. A request for fewer than 1 or more than Permits permits, or with a
// Config that has no rate, which the limiter never makes, is refused at once with no
// retry-after. See ratelimit.Store.
func (s *store) Reserve(ctx context.Context, req ratelimit.Request) (ratelimit.Grant, error) {
	if err := policy.ContextErr(ctx); err != nil {
		return ratelimit.Grant{}, err
	}
	if req.N < 1 || req.N > req.Config.Permits || req.Config.Period <= 0 {
		return ratelimit.Grant{Outcome: ratelimit.Refused}, nil
	}
	a := s.argsOf(req.Config, req.N)
	mwS, mwN := split(int64(max(req.MaxWait, 0)))
	res, err := s.run(ctx, "r", a.args[0], a.args[1], a.args[2], a.args[3], mwS, mwN)
	if err != nil {
		if err := ctx.Err(); err != nil {
			return ratelimit.Grant{}, err
		}
		return s.failed(a.t), nil
	}
	switch {
	case len(res) == 3 && res[0] == 0:
		return ratelimit.Grant{Outcome: ratelimit.Refused, Wait: time.Duration(max(join(res[1], res[2]), 0))}, nil
	case len(res) == 9 && res[0] == 1:
		return ratelimit.Grant{Outcome: ratelimit.Reserved, Wait: time.Duration(max(join(res[1], res[2]), 0)),
			Token: ratelimit.Token{Prev: join(res[3], res[4]), Next: join(res[5], res[6]), At: join(res[7], res[8])}}, nil
	}
	s.keyFailed(fmt.Errorf("ratelimit/redis: unexpected reply %v from the script on %s", res, s.keys[0]))
	return s.failed(a.t), nil
}

// Cancel runs the script's cancel: one round trip. Nothing is given back once t.At has
// passed on the server's clock. When the TAT is still t.Next (no later reservation stands
// behind it), the TAT moves back to t.Prev, and on over a freed slot that ends there;
// when later reservations stand behind it, its slot from now on, [max(t.Prev, now),
// t.Next), is kept as a freed slot, which the next reservation that fits takes before
// appending at the TAT. A nil or done ctx restores nothing.
func (s *store) Cancel(ctx context.Context, t ratelimit.Token) { s.cancel(ctx, t) }

// cancel is Cancel, reporting whether anything was given back.
func (s *store) cancel(ctx context.Context, t ratelimit.Token) bool {
	if policy.ContextErr(ctx) != nil {
		return false
	}
	pS, pN := split(max(t.Prev, 0))
	nS, nN := split(max(t.Next, 0))
	aS, aN := split(max(t.At, 0))
	res, err := s.run(ctx, "c", pS, pN, nS, nN, aS, aN)
	return err == nil && len(res) == 1 && res[0] == 1
}

// Available reads the TAT, the freed slots and the server's clock: one round trip. It
// counts, at the rate of c, the single permits free now at the TAT (as many as the
// limiter would see in-process with that TAT) and in the freed slots, at most
// c.Permits. A nil or done ctx, or a c with no rate, which the limiter never gives, is not
// sent, and has no answer (ok false).
func (s *store) Available(ctx context.Context, c ratelimit.Config) (int, bool) {
	if policy.ContextErr(ctx) != nil || c.Permits < 1 || c.Period <= 0 {
		return 0, false
	}
	res, err := s.run(ctx, "a")
	if err == nil && (len(res) < 5 || (len(res)-5)%4 != 0 || (res[0] == 0 && len(res) != 5)) {
		err = fmt.Errorf("ratelimit/redis: unexpected reply %v from the script on %s", res, s.keys[0])
		s.keyFailed(err)
	}
	if err != nil {
		if ctx.Err() != nil {
			return 0, false
		}
		switch s.b.cfg.OnFailure {
		case FailOpen:
			return c.Permits, true
		case FailClosed:
			return 0, true
		}
		return 0, false
	}
	if res[0] == 0 {
		return c.Permits, true
	}
	t, _, tau := weight(c, 1)
	n := gcra.Available(join(res[1]-res[3], res[2]-res[4]), t, tau, c.Permits)
	// A freed slot [from, to), from clipped at now, holds a single permit free now at
	// [x, x+T) when x+T <= now + Permits·T.
	end := satMul(int64(c.Permits), t)
	for i := 5; i+3 < len(res) && n < c.Permits; i += 4 {
		from := join(res[i]-res[3], res[i+1]-res[4])
		if to := min(join(res[i+2]-res[3], res[i+3]-res[4]), end); to-from >= t {
			n += int((to - from) / t)
		}
	}
	return min(n, c.Permits), true
}

// failed is the grant of the failure policy; t is the emission interval, FailClosed's
// retry-after.
func (s *store) failed(t int64) ratelimit.Grant {
	switch s.b.cfg.OnFailure {
	case FailOpen:
		return ratelimit.Grant{Outcome: ratelimit.Unlimited}
	case FailClosed:
		return ratelimit.Grant{Outcome: ratelimit.Refused, Wait: time.Duration(t)}
	}
	return ratelimit.Grant{Outcome: ratelimit.Local}
}

var (
	// errDown: Redis is known to be down and no probe is due; the call was not tried.
	errDown = errors.New("ratelimit/redis: backend down")
	// errKeyBad: the key's last answer was a data error and no retry is due; the call was
	// not tried.
	errKeyBad = errors.New("ratelimit/redis: key holds no TAT")
)

// run runs the script with op and args, within the backend's timeout. While the keys'
// last answer was a data error, it returns errKeyBad at once, except for one call per
// probe interval, which tries the keys again. While the node that holds the keys (the
// server, or the cluster node that owns their slot) is down, it returns errDown at once,
// except for one call per probe interval and node (whatever the limiter or key), which
// tries the node.
//
// Any answer from Redis marks the node up; a data error (dataError) marks only the keys
// bad, and another failure other than ctx's end marks the node down.
func (s *store) run(ctx context.Context, op string, args ...any) ([]int64, error) {
	every := s.b.cfg.ProbeInterval
	if s.keyBad.Load().blocked(every) {
		return nil, errKeyBad
	}
	// The node is looked up only while some node is down: a healthy backend's calls pay
	// nothing for it.
	var node nodeRef
	known := false
	if s.b.down.some() {
		node, known = s.node(false), true
		if o := s.b.down.of(node.name); o != nil {
			if o.blocked(every) {
				return nil, errDown
			}
			node = s.node(true) // this call is the node's probe: where do the keys live now?
		}
	}
	argv := make([]any, 1+len(args))
	argv[0] = op
	copy(argv[1:], args)
	res, err := s.exec(ctx, argv)
	switch {
	case err == nil:
		s.answered(node, known)
		if s.keyBad.Load() != nil {
			s.keyBad.Store(nil)
		}
		return res, nil
	case ctx.Err() != nil:
		// The caller gave up: nothing is learned about Redis or the key.
	case s.b.cluster && moving(err):
		// The keys' slot moved under the call faster than the client followed it: the nodes
		// answered, and none is down. This call alone takes the failure policy. (A client
		// that does not follow redirections, e.g. a *redis.Client of one cluster node, gets
		// them on every call: a failure, below.)
	case dataError(err):
		s.answered(node, known)
		s.keyFailed(fmt.Errorf("ratelimit/redis: %s: %w", s.keys[0], err))
	default:
		s.fail(node, known, fmt.Errorf("ratelimit/redis: %s: %w", s.keys[0], err))
	}
	return nil, err
}

// node returns the node of the store's keys, as the client's slot map said at most a
// probe interval ago, or, when fresh, as it says now: a lookup per interval and store, so
// that the calls of an outage neither read the client's slot map (which may start its
// reload) one by one nor wait for it.
func (s *store) node(fresh bool) nodeRef {
	if s.b.node == nil {
		return nodeRef{}
	}
	now := s.clk.Now()
	if c := s.nodeAt.Load(); c != nil && !fresh && now < c.until {
		return c.ref
	}
	ref := s.b.nodeOf(s.keys[0])
	s.nodeAt.Store(&cachedNode{ref: ref, until: sat.Add(now, s.b.cfg.ProbeInterval)})
	return ref
}

// cachedNode is a store's node, as looked up, until a clock time.
type cachedNode struct {
	ref   nodeRef
	until time.Duration
}

// dataError reports whether err is Redis's answer about the keys' values, not about
// Redis: WRONGTYPE (a key holds another type), the script's BADTAT (a string that is not a
// TAT) or BADSLOTS (a string that is not a list of freed slots). Any other error, an
// error reply such as LOADING, READONLY, OOM or BUSY included, is a failure of Redis.
func dataError(err error) bool {
	return goredis.HasErrorPrefix(err, "WRONGTYPE") || goredis.HasErrorPrefix(err, badTAT) ||
		goredis.HasErrorPrefix(err, badSlots)
}

// moving reports whether err is a Redis Cluster redirection that the client gave up
// following (MOVED, ASK) or a TRYAGAIN of a slot being migrated: the script did not run,
// and the nodes are up.
func moving(err error) bool {
	return goredis.HasErrorPrefix(err, "MOVED ") || goredis.HasErrorPrefix(err, "ASK ") ||
		goredis.HasErrorPrefix(err, "TRYAGAIN")
}

// movingTries is how many more times a call whose keys' slot is moving runs the script,
// within its timeout, after the client's own redirections (three by default) ran out.
const movingTries = 3

// runScript runs the script once, and, for a cluster client, again, up to movingTries
// times within ctx, while the keys' slot is moving (moving): the client then follows the
// slot to its new node.
func (s *store) runScript(ctx context.Context, argv []any) ([]int64, error) {
	res, err := script.Run(ctx, s.b.client, s.keys, argv...).Int64Slice()
	for i := 0; s.b.cluster && i < movingTries && err != nil && moving(err) && ctx.Err() == nil; i++ {
		res, err = script.Run(ctx, s.b.client, s.keys, argv...).Int64Slice()
	}
	return res, err
}

// exec runs the script, bounded by the timeout: EVALSHA, and EVAL when the server does
// not know the script (after a restart or SCRIPT FLUSH), again while its slot is moving.
func (s *store) exec(ctx context.Context, argv []any) ([]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, s.b.cfg.Timeout)
	defer cancel()
	if s.b.bounded {
		res, err := s.runScript(ctx, argv)
		return res, tooLate(ctx, err)
	}
	// The client ignores the deadline once a command is on the wire: leave its goroutine
	// behind at the timeout; it ends with the client's own read timeout.
	type result struct {
		res []int64
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := s.runScript(ctx, argv)
		done <- result{res, err}
	}()
	select {
	case r := <-done:
		return r.res, r.err
	case <-ctx.Done():
		// A reply that came in time wins over the timer, even when the caller's goroutine
		// runs late and finds both ready (select would pick either).
		select {
		case r := <-done:
			return r.res, r.err
		default:
		}
		return nil, ctx.Err()
	}
}

// tooLate makes the error of a call that ran out of time match context.DeadlineExceeded,
// whichever timer fired first: the context's, or the socket deadline that the client
// derives from it (a net.Error whose Timeout is true).
func tooLate(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var ne net.Error
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
	}
	return err
}

// answered marks the keys' node up after any answer: the first after a failure
// publishes RateLimiterBackendRecovered, naming the node; and it probes the other nodes
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
// RateLimiterBackendFailed, naming the node.
func (s *store) fail(node nodeRef, known bool, err error) {
	if !known {
		node = s.node(true)
	}
	s.b.down.fail(node, s, err)
}

// keyFailed marks the keys bad: their next try is one interval away. The first data error
// after a good answer publishes RateLimiterBackendKeyFailed with the key.
func (s *store) keyFailed(err error) {
	if o := s.keyBad.Load(); o != nil {
		o.postpone(s.b.cfg.ProbeInterval)
		return
	}
	o := newOutage(s.clk, s.b.cfg.ProbeInterval)
	if s.keyBad.CompareAndSwap(nil, o) {
		s.listener.Publish(policy.Event{Kind: policy.RateLimiterBackendKeyFailed, Instance: s.id, At: s.clk.Now(),
			Key: s.keys[0], Err: err})
	}
}

// satMul returns a·b for a, b ≥ 0, saturating at the largest int64.
func satMul(a, b int64) int64 {
	if a != 0 && b > (1<<63-1)/a {
		return 1<<63 - 1
	}
	return a * b
}
