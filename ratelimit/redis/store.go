package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
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

	keyArgs [2]any // keys, boxed once for the command's arguments

	// Coalescing: while a decision of this store is on its way to Redis, the Reserves that
	// come queue, and go together in one script run as soon as it is back (see Reserve).
	mu    sync.Mutex
	busy  bool      // a script run of Reserve is in flight; its sender drains the queue after it
	queue []*waiter // the Reserves waiting for the next run, in their order of arrival
	// Owned by the sender in flight (busy): the batch being decided, and the command's
	// arguments, reused from one run to the next with a client that bounds its own I/O.
	batch []*waiter
	argv  []any
}

// maxBatch is how many Reserves of one store one script run decides at most.
const maxBatch = 64

// A waiter is one Reserve in a batch: its request, and its answer.
type waiter struct {
	a  *rateArgs
	mw int64 // MaxWait in ns, at least 0
	g  ratelimit.Grant

	// For a queued Reserve: whether its caller still waits (waiting), has its answer
	// (answered), or left when its ctx ended (left); the sender signals ready once
	// answered.
	state atomic.Uint32
	ready chan struct{}
}

// The states of a queued waiter.
const (
	waiting uint32 = iota
	answered
	left
)

// waiters recycles the waiters of queued Reserves, so that a queued call allocates nothing.
var waiters = sync.Pool{New: func() any { return &waiter{ready: make(chan struct{}, 1)} }}

// rateArgs is what the script's reserve takes for n permits at one rate: inc = n·T and
// tol = (Permits-n)·T as pairs, boxed once, so that the calls of a limiter at one rate
// and weight box nothing for them.
type rateArgs struct {
	permits  int
	period   time.Duration
	n        int
	t        int64  // T in ns, the emission interval, rounded up
	inc, tol int64  // n·T and (Permits-n)·T in ns
	args     [4]any // inc and tol as pairs
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
	a := &rateArgs{permits: c.Permits, period: c.Period, n: n, t: t, inc: inc, tol: tol, args: [4]any{iS, iN, lS, lN}}
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
	st := &store{b: b, keys: []string{key, key + freedSuffix}, id: id, key: bd.Key, clk: clk, listener: bd.Listener}
	st.keyArgs = [2]any{st.keys[0], st.keys[1]}
	return st
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
//
// Concurrent Reserves coalesce: a Reserve that finds none of the store's in flight sends
// its own at once, with its own ctx; those that come while one is in flight queue, and
// are sent together, in their order of arrival (at most maxBatch per run), by one script
// run as soon as the run in flight is back, each decided against the state the one before
// left. The sender of the queued ones (drain) answers a run's callers and lets them run
// before it takes the next run's: callers that call again at once then go in that run,
// rather than wait for the one after. At most one run of Reserves per store is in flight.
// A queued caller whose ctx ends stops waiting and returns ctx's error; a permit its
// batch reserved for it is then given back (giveBack), by the sender, before its next run.
func (s *store) Reserve(ctx context.Context, req ratelimit.Request) (ratelimit.Grant, error) {
	if err := policy.ContextErr(ctx); err != nil {
		return ratelimit.Grant{}, err
	}
	if req.N < 1 || req.N > req.Config.Permits || req.Config.Period <= 0 {
		return ratelimit.Grant{Outcome: ratelimit.Refused}, nil
	}
	a := s.argsOf(req.Config, req.N)
	mw := int64(max(req.MaxWait, 0))
	s.mu.Lock()
	if s.busy {
		w := waiters.Get().(*waiter)
		w.a, w.mw, w.g = a, mw, ratelimit.Grant{}
		w.state.Store(waiting)
		s.queue = append(s.queue, w)
		s.mu.Unlock()
		return s.await(ctx, w)
	}
	s.busy = true
	s.mu.Unlock()
	w := waiter{a: a, mw: mw}
	one := [1]*waiter{&w}
	err := s.decide(ctx, one[:])
	s.release()
	if err != nil {
		return ratelimit.Grant{}, err
	}
	return w.g, nil
}

// await waits for the answer of w, queued, or for ctx's end.
func (s *store) await(ctx context.Context, w *waiter) (ratelimit.Grant, error) {
	if done := ctx.Done(); done == nil { // a ctx that never ends (the limiter's own calls)
		<-w.ready
	} else {
		select {
		case <-w.ready:
		case <-done:
			if w.state.CompareAndSwap(waiting, left) {
				return ratelimit.Grant{}, ctx.Err() // the sender gives its permit back
			}
			<-w.ready // answered meanwhile: the answer is the caller's
		}
	}
	g := w.g
	waiters.Put(w)
	return g, nil
}

// release ends the run in flight of the caller that holds busy: when Reserves queued
// meanwhile, a goroutine sends them (drain); otherwise the next Reserve sends its own.
func (s *store) release() {
	s.mu.Lock()
	if len(s.queue) == 0 {
		s.busy = false
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	go s.drain()
}

// drain sends the queued Reserves, maxBatch at a time, until none is left, with a context
// of its own (each caller waits on its own ctx), and answers each.
func (s *store) drain() {
	for {
		s.mu.Lock()
		batch := s.batch[:0]
		n := 0
		for _, w := range s.queue {
			if len(batch) == maxBatch {
				break
			}
			n++
			if w.state.Load() == left { // its caller left before it was sent: nothing to take
				waiters.Put(w)
				continue
			}
			batch = append(batch, w)
		}
		rest := copy(s.queue, s.queue[n:])
		clear(s.queue[rest:])
		s.queue = s.queue[:rest]
		if len(batch) == 0 && rest == 0 {
			s.busy = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		s.batch = batch
		if len(batch) > 0 {
			_ = s.decide(context.Background(), batch) // Background never ends: no error
			s.answer(batch)
			// The callers just answered often call again at once: let them queue for
			// the next run, rather than be left for the one after (two runs for one).
			runtime.Gosched()
		}
	}
}

// answer gives each waiter of a decided batch its grant; for one whose caller left, it
// gives the permits reserved for it back, the last reserved first.
func (s *store) answer(batch []*waiter) {
	for i, w := range batch {
		if w.state.CompareAndSwap(waiting, answered) {
			// The waiter is its caller's from now on: the caller reads its grant and puts
			// it back in the pool, where another call may take it at once. The sender
			// must not look at it again.
			batch[i] = nil
			w.ready <- struct{}{}
		}
	}
	for i := len(batch) - 1; i >= 0; i-- {
		if w := batch[i]; w != nil { // its caller left: the waiter is the sender's
			if w.g.Outcome == ratelimit.Reserved {
				s.giveBack(w.g.Token)
			}
			waiters.Put(w)
		}
		batch[i] = nil
	}
}

// giveBack cancels a reservation that its caller never received: whether its time has
// come on the server's clock does not matter, as nobody used it.
func (s *store) giveBack(t ratelimit.Token) {
	t.At = max(t.At, t.Next)
	s.cancel(context.Background(), t)
}

// decide runs the script's reserve for the requests of batch, in order, and sets each
// one's grant: the script's answer, or the failure policy's when Redis did not answer
// well (every request of a failed run takes it, as if it had failed alone). It returns
// ctx's error, with no grant set, when the run failed after ctx ended. Requests alike
// (the same rate, weight and MaxWait) in a row go as one group, and the script answers
// runs of them at once (see gcraScript): each reservation's slot, wait and permit time
// follow from its start, now and its weight, as the script computes them.
func (s *store) decide(ctx context.Context, batch []*waiter) error {
	argv := s.command(7 * len(batch))
	argv = append(argv, "r")
	for i := 0; i < len(batch); {
		w, k := batch[i], 1
		for i+k < len(batch) && batch[i+k].a == w.a && batch[i+k].mw == w.mw {
			k++
		}
		mwS, mwN := split(w.mw)
		argv = append(argv, w.a.args[0], w.a.args[1], w.a.args[2], w.a.args[3], mwS, mwN, int64(k))
		i += k
	}
	res, err := s.run(ctx, argv)
	s.done(argv)
	if err != nil {
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, w := range batch {
			w.g = s.failed(w.a.t)
		}
		return nil
	}
	i, j := 0, 2 // the next request, the next run of answers in res
	if len(res) >= 2 {
		now := join(res[0], res[1])
		for ; j+4 <= len(res) && i < len(batch); j += 4 {
			code, k := res[j], res[j+1]
			if k < 1 || k > int64(len(batch)-i) {
				if code == 2 && k == 0 && i > 0 && j+4 == len(res) {
					// The freed-slots key is bad, found at this request: the rest again,
					// which meets the data error at once.
					return s.decide(ctx, batch[i:])
				}
				break
			}
			run := batch[i : i+int(k)]
			switch code {
			case 0:
				g := ratelimit.Grant{Outcome: ratelimit.Refused, Wait: time.Duration(max(join(res[j+2], res[j+3]), 0))}
				for _, w := range run {
					w.g = g
				}
			case 1:
				prev := join(res[j+2], res[j+3])
				for _, w := range run {
					start := max(prev, now)
					next := int64(sat.Add(time.Duration(start), time.Duration(w.a.inc)))
					wait := max(start-now-w.a.tol, 0)
					w.g = ratelimit.Grant{Outcome: ratelimit.Reserved, Wait: time.Duration(wait),
						Token: ratelimit.Token{Prev: prev, Next: next, At: int64(sat.Add(time.Duration(now), time.Duration(wait)))}}
					prev = next
				}
			default:
				j = len(res) + 1 // unexpected
			}
			if j > len(res) {
				break
			}
			i += int(k)
		}
	}
	if i != len(batch) || j != len(res) {
		s.keyFailed(fmt.Errorf("ratelimit/redis: unexpected reply %v from the script on %s", res, s.keys[0]))
		for _, w := range batch[i:] {
			w.g = s.failed(w.a.t)
		}
	}
	return nil
}

// command returns an empty slice for a command's arguments, with room for the script's
// ARGV of n+1 arguments after the header that runScript fills: the store's own, reused,
// with a client that bounds its own I/O (no call outlives its caller), a new one
// otherwise. Only the caller that holds busy takes the store's own.
func (s *store) command(n int) []any {
	size := cmdHeader + 1 + n
	if !s.b.bounded {
		return make([]any, cmdHeader, size)
	}
	if cap(s.argv) < size {
		s.argv = make([]any, cmdHeader, max(size, cmdHeader+1+6))
	}
	return s.argv[:cmdHeader]
}

// done clears argv, the store's own, once its run is over, so that it holds nothing.
func (s *store) done(argv []any) {
	if s.b.bounded {
		clear(argv[:cap(argv)])
	}
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
	res, err := s.run(ctx, append(make([]any, cmdHeader, cmdHeader+7), "c", pS, pN, nS, nN, aS, aN))
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
	res, err := s.run(ctx, append(make([]any, cmdHeader, cmdHeader+1), "a"))
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

// run runs the script with argv, within the backend's timeout: argv's first cmdHeader
// elements are for the command's header, which runScript sets, and the script's ARGV (the
// operation and its arguments) follow. While the keys'
// last answer was a data error, it returns errKeyBad at once, except for one call per
// probe interval, which tries the keys again. While the node that holds the keys (the
// server, or the cluster node that owns their slot) is down, it returns errDown at once,
// except for one call per probe interval and node (whatever the limiter or key), which
// tries the node.
//
// Any answer from Redis marks the node up; a data error (dataError) marks only the keys
// bad, and another failure other than ctx's end marks the node down.
func (s *store) run(ctx context.Context, argv []any) ([]int64, error) {
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
	res, err := s.runOnce(ctx, argv)
	for i := 0; s.b.cluster && i < movingTries && err != nil && moving(err) && ctx.Err() == nil; i++ {
		res, err = s.runOnce(ctx, argv)
	}
	return res, err
}

// cmdHeader is how many arguments of a script command come before its ARGV: EVALSHA, the
// script's SHA-1 digest, the number of keys (2), and the keys.
const cmdHeader = 5

// The header's constant arguments, boxed once.
var (
	evalSHA, evalSrc any = script.Hash(), gcraScript
	twoKeys          any = "2"
)

// processor is a client that runs any command: *redis.Client, *redis.ClusterClient and
// *redis.Ring are. The store reads the script's reply, an array of integers, straight into
// one []int64 with it.
type processor interface {
	Process(ctx context.Context, cmd goredis.Cmder) error
}

// runOnce runs the script with EVALSHA, and EVAL when the server does not know it (after
// a restart or SCRIPT FLUSH).
func (s *store) runOnce(ctx context.Context, argv []any) ([]int64, error) {
	p, ok := s.b.client.(processor)
	if !ok {
		return script.Run(ctx, s.b.client, s.keys, argv[cmdHeader:]...).Int64Slice()
	}
	argv[0], argv[1], argv[2], argv[3], argv[4] = "evalsha", evalSHA, twoKeys, s.keyArgs[0], s.keyArgs[1]
	cmd := goredis.NewIntSliceCmd(ctx, argv...)
	cmd.SetFirstKeyPos(3)
	err := p.Process(ctx, cmd)
	if err != nil && goredis.HasErrorPrefix(err, "NOSCRIPT") {
		argv[0], argv[1] = "eval", evalSrc
		cmd = goredis.NewIntSliceCmd(ctx, argv...)
		cmd.SetFirstKeyPos(3)
		err = p.Process(ctx, cmd)
	}
	return cmd.Val(), err
}

// exec runs the script, bounded by the timeout: EVALSHA, and EVAL when the server does
// not know the script (after a restart or SCRIPT FLUSH), again while its slot is moving.
func (s *store) exec(ctx context.Context, argv []any) ([]int64, error) {
	ctx, cancel := s.b.bound(ctx)
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
// publishes ratelimit.EventBackendRecovered, naming the node; and it probes the other nodes
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
// ratelimit.EventBackendFailed, naming the node.
func (s *store) fail(node nodeRef, known bool, err error) {
	if !known {
		node = s.node(true)
	}
	s.b.down.fail(node, s, err)
}

// keyFailed marks the keys bad: their next try is one interval away. The first data error
// after a good answer publishes ratelimit.EventBackendKeyFailed with the key.
func (s *store) keyFailed(err error) {
	if o := s.keyBad.Load(); o != nil {
		o.postpone(s.b.cfg.ProbeInterval)
		return
	}
	o := newOutage(s.clk, s.b.cfg.ProbeInterval)
	if s.keyBad.CompareAndSwap(nil, o) {
		s.listener.Publish(policy.Event{Kind: ratelimit.EventBackendKeyFailed, Instance: s.id, At: s.clk.Now(),
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
