package redis

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/internal/gcra"
)

// store is one limiter's state in Redis: its keys, its TAT's and its freed slots'. Whether
// Redis is known to be down is the backend's, shared by all its stores; whether the keys
// hold values the script cannot use is the store's own. The rate is not the store's: each
// call brings the limiter's configuration in force, so a limiter reconfigured while it
// runs takes its new rate from the next call, which converts the TAT key's schedule (see
// gcraScript).
type store struct {
	b        *Backend
	keys     []string // the limiter's TAT key and its freed-slots key
	id       string   // the limiter's instance id, without a keyed limiter's key
	key      string   // a keyed limiter's key, as its events name it; "" otherwise
	clk      clock.Clock
	listener policy.Listener

	// The keys' own health. A data error (a key holds a list, or a string that is not a
	// TAT or freed slots) says nothing about Redis, which answered: it keeps this limiter
	// on the failure policy and leaves every other key and limiter on Redis.
	keyBad atomic.Pointer[outage] // nil while the keys' last answer was not a data error

	nodeAt atomic.Pointer[cachedNode] // the keys' node, looked up while some node is down

	last atomic.Pointer[rateArgs] // the arguments of the last Reserve's rate and weight
	wins atomic.Pointer[winSet]   // the further windows of the last call that had some

	// The further windows' slots of the latest grants with windows, for their Cancel.
	recentMu sync.Mutex
	recent   [recentGrants]winGrant
	recentAt uint8 // the ring's next place

	keyArgs [2]any // keys, boxed once for the command's arguments

	// Coalescing: while a decision of this store is on its way to Redis, the Reserves that
	// come queue, and go together in one script run as soon as it is back (see Reserve).
	mu    sync.Mutex
	busy  bool      // a script run of Reserve is in flight; its sender drains the queue after it
	queue []*waiter // the Reserves waiting for the next run, in their order of arrival
	// How many callers were answered and have not taken their answer yet: the sender
	// lets them run before it takes the next run (see letAnsweredRun).
	waking atomic.Int32
	// Owned by the sender in flight (busy): the batch being decided, and the command's
	// arguments, reused from one run to the next with a client that bounds its own I/O.
	batch []*waiter
	argv  []any

	lz *leaseState // the store's leases (see Leases); nil without
}

// rateArgs is what the script's reserve takes for n permits at one rate: inc = n·T and
// tol = (Permits-n)·T as pairs, then T as a pair and Permits (the rate, which the script
// compares with the one the TAT is written at), boxed once, so that the calls of a
// limiter at one rate and weight box nothing for them.
type rateArgs struct {
	permits  int
	period   time.Duration
	n        int
	t        int64  // T in ns, the emission interval, rounded up
	inc, tol int64  // n·T and (Permits-n)·T in ns
	args     [7]any // inc and tol as pairs, T as a pair, Permits
	// The further windows (nil: none), and for each its inc and tol as pairs.
	w     *winSet
	wargs []any
}

// argsOf returns the arguments for n permits at the rate of permits per period: the last call's when they
// are the same, else new ones, which the next call can take again.
func (s *store) argsOf(permits int, period time.Duration, n int) *rateArgs {
	if a := s.last.Load(); a != nil && a.n == n && a.permits == permits && a.period == period {
		return a
	}
	t, inc, tol := weight(permits, period, n)
	iS, iN := split(inc)
	lS, lN := split(tol)
	tS, tN := split(t)
	a := &rateArgs{permits: permits, period: period, n: n, t: t, inc: inc, tol: tol,
		args: [7]any{iS, iN, lS, lN, tS, tN, int64(permits)}}
	s.last.Store(a)
	return a
}

var _ backend.Store = (*store)(nil)

func newStore(b *Backend, bd backend.Binding) *store {
	clk := bd.Clock
	if clk == nil {
		clk = clock.System()
	}
	key, id := b.key(bd.ID), bd.ID
	if bd.Keyed {
		id = strings.TrimSuffix(id, ":"+bd.Key)
	}
	st := &store{b: b, keys: []string{key, key + freedSuffix}, id: id, key: bd.Key, clk: clk, listener: bd.Listener}
	st.keyArgs = [2]any{st.keys[0], st.keys[1]}
	if b.cfg.Lease > 0 && clk == clock.System() {
		st.lz = &leaseState{}
	}
	return st
}

// freedSuffix ends the name of a limiter's freed-slots key, after its TAT key: the same
// hash tag, so a Redis Cluster keeps both in one slot.
const freedSuffix = ":freed"

// weight returns, for a call for n permits at the rate of permits per period, the stretch
// of the schedule it takes, n·T, and its tolerance, (permits-n)·T, with T the emission
// interval.
func weight(permits int, period time.Duration, n int) (t, inc, tol int64) {
	t = int64(gcra.Interval(permits, period))
	return t, sat.Mul(int64(n), t), sat.Mul(int64(permits-n), t)
}

// Cancel runs the script's cancel: one round trip. Nothing is given back once t.At has
// passed on the server's clock. When the TAT is still t.Next (no later reservation stands
// behind it), the TAT moves back to t.Prev, and on over a freed slot that ends there;
// when later reservations stand behind it, its slot from now on, [max(t.Prev, now),
// t.Next), is kept as a freed slot, which the next reservation that fits takes before
// appending at the TAT. A nil or done ctx restores nothing. A grant of the store's lease
// (see Leases) that is the latest taken from it goes back to the lease, with no round
// trip.
func (s *store) Cancel(ctx context.Context, t backend.Grant) {
	if s.lz != nil && s.cancelLeased(ctx, t) {
		return
	}
	s.cancel(ctx, t)
}

// cancel is Cancel, reporting whether anything was given back.
func (s *store) cancel(ctx context.Context, t backend.Grant) bool {
	if decorate.ContextErr(ctx) != nil {
		return false
	}
	pS, pN := split(max(t.Prev, 0))
	nS, nN := split(max(t.Next, 0))
	aS, aN := split(max(t.At, 0))
	w, slots, ok := s.recentOf(t)
	if !ok {
		return false
	}
	argv := make([]any, cmdHeader+w.count(), cmdHeader+w.count()+8+4*w.count())
	argv = append(argv, "c", pS, pN, nS, nN, aS, aN, t.Epoch)
	for i := range w.count() {
		ps, pn := split(max(slots[i][0], 0))
		xs, xn := split(max(slots[i][1], 0))
		argv = append(argv, ps, pn, xs, xn)
	}
	res, err := s.run(ctx, w, argv)
	return err == nil && len(res) == 1 && res[0] == 1
}

// Available reads the TAT, the freed slots and the server's clock: one round trip. It
// counts, at the rate of permits per period, the single permits free now at the TAT (as
// many as the limiter would see in-process with that TAT) and in the freed slots, and
// those of the store's leases (see Leases) that a call could take now, at most permits. A
// nil or done ctx, or no rate, which the limiter never gives, is not sent, and has no
// answer (ok false).
func (s *store) Available(ctx context.Context, req backend.Request) (int, bool) {
	n, ok := s.available(ctx, req)
	if ok && s.lz != nil {
		n = int(min(int64(n)+s.leasedNow(&req, int64(s.clk.Now())), int64(req.Permits)))
	}
	return n, ok
}

// available is Available on Redis alone.
func (s *store) available(ctx context.Context, req backend.Request) (int, bool) {
	permits, period := req.Permits, req.Period
	if decorate.ContextErr(ctx) != nil || permits < 1 || period <= 0 {
		return 0, false
	}
	if len(req.Windows) > 0 {
		return s.availableWin(ctx, req)
	}
	tS, tN := split(int64(gcra.Interval(permits, period)))
	res, err := s.run(ctx, nil, append(make([]any, cmdHeader, cmdHeader+4), "a", tS, tN, int64(permits)))
	if err == nil && (len(res) < 5 || (len(res)-5)%4 != 0 || (res[0] == 0 && len(res) != 5)) {
		err = fmt.Errorf("ratelimit/redis: unexpected reply %v from the script on %s", res, s.keys[0])
		s.keyFailed(err)
	}
	if err != nil {
		return s.availableFailed(ctx, permits)
	}
	if res[0] == 0 {
		return permits, true
	}
	t, _, tau := weight(permits, period, 1)
	n := gcra.Available(join(res[1]-res[3], res[2]-res[4]), t, tau, permits)
	// A freed slot [from, to), from clipped at now, holds a single permit free now at
	// [x, x+T) when x+T <= now + Permits·T.
	end := sat.Mul(int64(permits), t)
	for i := 5; i+3 < len(res) && n < permits; i += 4 {
		from := join(res[i]-res[3], res[i+1]-res[4])
		if to := min(join(res[i+2]-res[3], res[i+3]-res[4]), end); to-from >= t {
			n += int((to - from) / t)
		}
	}
	return min(n, permits), true
}

// availableFailed is Available's answer when Redis did not answer, ctx's end aside: the
// failure policy's.
func (s *store) availableFailed(ctx context.Context, permits int) (int, bool) {
	if ctx.Err() != nil {
		return 0, false
	}
	switch s.b.cfg.OnFailure {
	case backend.Admitted:
		return permits, true
	case backend.Refused:
		return 0, true
	}
	return 0, false
}

// failed is the grant of the failure policy; t is the emission interval, Refused's
// retry-after.
func (s *store) failed(t int64) backend.Grant {
	switch s.b.cfg.OnFailure {
	case backend.Admitted:
		return backend.Grant{Verdict: backend.Admitted}
	case backend.Refused:
		return backend.Grant{Verdict: backend.Refused, Wait: time.Duration(t)}
	}
	return backend.Grant{Verdict: backend.Local}
}
