package redis

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
)

// Leases lets each limiter (and each hot key of a keyed limiter) of this process reserve
// its permits in batches, leases, and decide its calls in-process from them, at the cost
// of an in-process limiter's decision: no round trip, no allocation. life is a lease's
// life: a lease is reserved by one script run, for k permits whose permit times are all
// within life of it, and what is left of it when life has passed is given back. Default
// 0: no leases, every decision is one script run (see New). Negative fails New with
// R4C-ATR-004.
//
// The guarantee is unchanged: over the whole fleet, no window of length d ever sees
// more than Permits + floor(d/T) permits. A lease of k permits is k real, consecutive
// slots of the shared schedule, each of length T; the process admits a permit of its
// lease only at a time between the slot's permit time (Permits·T before its end) and its
// start, both mapped to the process's clock conservatively (from the instants just
// before the script run was sent and just after its answer came, with 1µs of margin for
// the server's clock resolution), so the bound holds whatever the clocks' offset, as long
// as they run at the same rate. A slot whose start has passed unused is never used. A
// weighted call takes n consecutive slots. With further windows, each permit holds its
// slot in every window, and the same rule holds in each. The slots of a lease are given
// back (as a canceled reservation's: the script frees them exactly) when its life ends,
// when the limiter's rate changes, and on Close; a leased reservation that is canceled
// gives its slots back to the lease, or to Redis (also after its lease went back, the
// store's last one at least: counted as returned, not used). A limiter's available
// permits count its lease's slots that a call could take now, with those free on Redis.
//
// The size k of a lease follows the rate at which the store's calls ask for permits
// (admitted or refused), sampled about every half life: what they ask for per life, at
// most Permits (and each window's Permits), and no more than the slots' starts leave time
// to use at that rate. A limiter or key whose calls ask for fewer than 2 permits per life
// has no lease, and costs exactly what it costs without leases. The next lease is
// reserved, by one background run, once half of the current one is used, so that a
// steady caller never waits a round trip. Decisions stay local under saturation: a
// lease's next slot whose permit time has not come refuses locally with the wait as the
// retry-after; an exhausted lease whose successor is on its way refuses a call that
// cannot wait (and is not larger than the lease), with T as the retry-after; and once
// Redis refused a lease (the quota is booked more than a life ahead), calls at its rate
// that cannot wait until it would fit are refused locally until then, with the
// retry-after Redis would have given them at that booking. A call that may wait, and a
// call at another rate, go to Redis as without leases.
//
// The price, which the guarantee does not cover: waste and fairness. Slots of a lease
// that pass unused before its life ends (the process's calls stopped or slowed) are
// lost to the fleet: at most k per lease, so at most instances × k permits per life
// (Backend.Leases counts them). An instance that holds a lease admits from it while
// another instance, with none, is refused: the quota goes to whoever leased it first,
// within a life. A process killed while it holds a lease loses its remaining slots:
// the other instances get the quota back within one life. Redis failing does not end a
// lease: its slots are real, and are used until they pass; calls without a usable lease
// take the failure policy (OnFailure).
//
// Leases need the limiter's clock to be the system clock (clock.System, the default): a
// limiter with another clock (a registry's manual clock) decides every call on Redis.
func Leases(life time.Duration) Option { return func(c *config) { c.Lease = life } }

// LeaseStats counts the permits of a Backend's leases (see Leases), since New, over every
// limiter and key of the backend.
type LeaseStats struct {
	// Leases is how many leases were reserved.
	Leases int64
	// Leased is how many permits they reserved: Leased/Leases is their mean size, k.
	Leased int64
	// Used is how many of them were admitted (leased reservations canceled and given back
	// excepted).
	Used int64
	// Returned is how many were given back to Redis unused.
	Returned int64
	// Wasted is how many passed unused and were not given back: Leased - Used -
	// Returned, less what live leases still hold.
	Wasted int64
}

// Leases returns the counts of the backend's leases so far. It is safe for concurrent
// use; the counts of live leases are read without stopping them.
func (b *Backend) Leases() LeaseStats {
	if b == nil {
		return LeaseStats{}
	}
	st := LeaseStats{Leases: b.ls.leases.Load(), Leased: b.ls.leased.Load(), Used: b.ls.used.Load(), Returned: b.ls.returned.Load(),
		Wasted: b.ls.wasted.Load()}
	b.ls.mu.Lock()
	for l := range b.ls.live {
		st.Used += l.usedNow()
	}
	b.ls.mu.Unlock()
	return st
}

// leaseState is a store's leases: the one in use, the next one, reserved ahead, and what
// decides when to reserve one.
type leaseState struct {
	cur, next atomic.Pointer[lease]
	gone      atomic.Pointer[lease] // the lease last taken out of cur or next: its canceled grants are still its
	busy      atomic.Bool           // a background run reserves the next lease
	hold      atomic.Pointer[hold]  // Redis's last refusal of a lease
	retry     atomic.Int64          // no lease is reserved before this clock time (Redis failed)
	count     atomic.Int64          // permits asked for: on Redis, refused locally, and admitted by retired leases
	markAt    atomic.Int64          // the clock time of the last sample of the rate; 0: none yet
	markN     atomic.Int64          // count then
	k         atomic.Int64          // the size of the next lease, from the last sample
	lead      atomic.Int64          // how far ahead of the server's now the TAT was at the last grant
	rtt       atomic.Int64          // the last round trip's duration, on the clock
}

// hold is Redis's refusal of a lease of k permits at a rate: calls at that rate that
// cannot wait until the clock time until are refused locally, with the wait of the
// refusal's booking: its k permits would have been free at the clock time free, each
// permit fewer at most t sooner (the longest T of its pairs).
type hold struct {
	permits        int
	period         time.Duration
	wins           *backend.Window
	nw             int
	until, free, k int64
	t              int64
}

// matches reports whether h was refused at the rate of permits per period with the
// further windows wins.
func (h *hold) matches(permits int, period time.Duration, wins []backend.Window) bool {
	if h.permits != permits || h.period != period || h.nw != len(wins) {
		return false
	}
	return h.nw == 0 || &wins[0] == h.wins
}

// lease is k consecutive slots of the shared schedule, each of length t, the first
// starting at s0 on the server's clock; with further windows, k slots of each window
// too. Slot i may be used at a clock time of the process in [lo(i), hi(i)]: lo is its
// permit time mapped late, hi its start mapped early (see Leases). Only cursor moves:
// the slots before it are taken or passed; k+1 marks a lease retired.
type lease struct {
	s       *store
	permits int
	period  time.Duration
	wins    *backend.Window // &Windows[0] of the request's windows; nil without
	w       *winSet
	k       int64
	t       int64
	s0      int64 // the first slot's start, on the server's clock
	h0, l0  int64 // hi(0) and lo(0) of Permits per Period, on the process's clock
	loOff   int64 // the late mapping: process time = server time + loOff
	epoch   int64
	nw      int
	ws      [maxWindows]int64 // each window's first slot start, on the server's clock
	wt      [maxWindows]int64 // each window's T
	wh, wl  [maxWindows]int64 // each window's hi(0) and lo(0)
	cursor  atomic.Int64
	skipped atomic.Int64 // slots passed over unused
	kept    atomic.Int64 // once given back: 1 + the cursor then (the slots before it were its)
	timer   *time.Timer
}

// usedNow is how many of l's slots were admitted so far.
func (l *lease) usedNow() int64 { return min(l.cursor.Load(), l.k) - l.skipped.Load() }

// matches reports whether l was reserved at the rate of permits per period with the
// further windows wins.
func (l *lease) matches(permits int, period time.Duration, wins []backend.Window) bool {
	if l.permits != permits || l.period != period || l.nw != len(wins) {
		return false
	}
	return l.nw == 0 || &wins[0] == l.wins
}

// usableAt is how many of l's slots calls for one permit each could take at the clock
// time now, without waiting.
func (l *lease) usableAt(now int64) int64 {
	lo, hi := l.cursor.Load(), l.k-1 // a retired lease's cursor is k+1: none
	if now < l.l0 {
		return 0
	}
	if d := now - l.h0; d > lo*l.t {
		lo = (d + l.t - 1) / l.t
	}
	hi = min(hi, (now-l.l0)/l.t)
	for m := range l.nw {
		if now < l.wl[m] {
			return 0
		}
		if d := now - l.wh[m]; d > lo*l.wt[m] {
			lo = (d + l.wt[m] - 1) / l.wt[m]
		}
		hi = min(hi, (now-l.wl[m])/l.wt[m])
	}
	return max(hi-lo+1, 0)
}

// leasedNow is how many single permits the store's leases at req's rate would admit at
// the clock time now, without waiting.
func (s *store) leasedNow(req *backend.Request, now int64) int64 {
	var n int64
	for _, l := range [2]*lease{s.lz.cur.Load(), s.lz.next.Load()} {
		if l != nil && l.matches(req.Permits, req.Period, req.Windows) {
			n += l.usableAt(now)
		}
	}
	return n
}

// The outcomes of lease.take.
const (
	took      = iota // admitted from the lease
	refused          // its next slots' permit time is beyond the call's wait
	exhausted        // fewer than n slots left that may still be used
	unusable         // its next slots cannot be used at once by n permits (weight, windows)
	passed           // the slots left passed unused: the calls come slower than they start
)

// take takes n consecutive slots of l at the clock time now, for a call that may wait
// maxWait: the first ones whose start has not passed, if their permit times come within
// maxWait and before the first one's start. It returns the first slot taken, j, and the
// clock time at which the permits may go (took), or at which they would (refused). No
// lock, no allocation.
func (l *lease) take(now int64, n int64, maxWait int64) (j, at int64, out int) {
	for {
		c := l.cursor.Load()
		j = c
		if d := now - l.h0; d > j*l.t {
			j = (d + l.t - 1) / l.t
		}
		for m := range l.nw {
			if d := now - l.wh[m]; d > j*l.wt[m] {
				j = (d + l.wt[m] - 1) / l.wt[m]
			}
		}
		if j+n > l.k {
			if c+n > l.k {
				return 0, 0, exhausted
			}
			return 0, 0, passed
		}
		last := j + n - 1
		at = max(l.l0+last*l.t, now)
		for m := range l.nw {
			at = max(at, l.wl[m]+last*l.wt[m])
		}
		if at > l.h0+j*l.t {
			return 0, 0, unusable
		}
		for m := range l.nw {
			if at > l.wh[m]+j*l.wt[m] {
				return 0, 0, unusable
			}
		}
		if at-now > maxWait {
			return j, at, refused
		}
		if !l.cursor.CompareAndSwap(c, j+n) {
			continue
		}
		if j > c {
			l.skipped.Add(j - c)
		}
		return j, at, took
	}
}

// demandSample is how many of the refusals that a lease decides locally count, each for
// demandSample of them, towards the rate the next lease's size follows (see size): 1 in
// demandSample, picked at random, so that refusals write nothing shared.
const demandSample = 64

// refusedLocally counts, 1 time in demandSample, at random, n·demandSample permits asked
// for and refused locally.
func (lz *leaseState) refusedLocally(n int) {
	if rand.Uint32()%demandSample == 0 {
		lz.count.Add(int64(n) * demandSample)
	}
}

// fromLease decides n permits at the clock time now, for a call that may wait mw, at the
// rate of permits per period with the further windows wins, from the store's lease when
// it has a usable one at that rate (see Leases). It returns took, with the lease l, its
// first slot taken j and the clock time at which the permits may go; refused, with the
// clock time at which they would come (the retry-after's end); or unusable: the call
// goes to Redis.
func (s *store) fromLease(now, n, mw int64, permits int, period time.Duration, wins []backend.Window) (l *lease, j, at int64, out int) {
	lz := s.lz
	for {
		l = lz.cur.Load()
		if l == nil {
			break
		}
		if !l.matches(permits, period, wins) {
			// Another rate: the lease, and the next one, go back first, while the key is
			// still at their rate (the call converts it, after which a cancel gives
			// nothing back): one more round trip, at a change of configuration.
			for _, x := range [2]*lease{l, lz.next.Load()} {
				if x != nil {
					s.drop(x)
				}
			}
			break
		}
		j, at, out = l.take(now, n, mw)
		switch out {
		case took:
			s.tookFrom(l, now, n, at, permits, period, wins)
			return l, j, at, took
		case refused:
			// Not counted: the lease's slots, not the calls, bound what it can spend.
			return l, 0, at, refused
		case exhausted:
			if nx := lz.next.Load(); nx != nil {
				lz.gone.Store(l)
				if lz.cur.CompareAndSwap(l, nx) {
					lz.next.CompareAndSwap(nx, nil)
					s.retire(l)
					continue
				}
			}
			if mw == 0 && lz.busy.Load() && n <= l.k {
				// Its successor is on its way: refuse locally rather than ask Redis (a
				// call larger than a lease, which no lease serves, asks Redis).
				lz.refusedLocally(int(n))
				return l, 0, now + l.t, refused
			}
		case passed:
			lz.gone.Store(l)
			if lz.cur.CompareAndSwap(l, lz.next.Load()) {
				lz.next.CompareAndSwap(lz.cur.Load(), nil)
				s.retire(l)
				continue
			}
		}
		break
	}
	if h := lz.hold.Load(); h != nil && now < h.until && mw < h.until-now && h.matches(permits, period, wins) {
		// The wait is Redis's for n permits at the refusal's booking (a lower bound with
		// windows), not the hold's end: a call made then would still be refused.
		lz.refusedLocally(int(n))
		return nil, 0, max(h.until, h.free-max(h.k-n, 0)*h.t), refused
	}
	return nil, 0, 0, unusable
}

// tookFrom follows n permits taken from the lease l at the clock time now, for the time
// at: the next lease is reserved once half of l is used.
func (s *store) tookFrom(l *lease, now, n, at int64, permits int, period time.Duration, wins []backend.Window) {
	lz := s.lz
	if c := l.cursor.Load(); 2*(l.k-c) <= l.k && lz.next.Load() == nil && !lz.busy.Load() {
		s.startLease(now, &backend.Request{Permits: permits, Period: period, Windows: wins})
	}
	if h := s.b.admitHook; h != nil {
		h(s.key, at, true, int(n))
	}
}

// TryTake decides, from the store's lease, n permits for a call that cannot wait, at the
// clock time now, at the rate of permits per period with the further windows wins: the
// limiter's fast path (see rlcore.Taker). It returns backend.Admitted, backend.Refused
// with the retry-after in ns, or 0 when the store has no usable lease: the call goes to
// Reserve.
func (s *store) TryTake(now int64, n, permits int, period time.Duration, wins []backend.Window) (backend.Verdict, int64) {
	lz := s.lz
	if lz == nil || n < 1 || n > permits || period <= 0 {
		return 0, 0
	}
	// The current lease's decision first, with no more calls: take changes nothing
	// unless it takes, so that fromLease may decide the other outcomes afresh. (Close
	// takes the leases away from the stores.)
	if l := lz.cur.Load(); l != nil && l.matches(permits, period, wins) {
		switch _, at, out := l.take(now, int64(n), 0); out {
		case took:
			s.tookFrom(l, now, int64(n), at, permits, period, wins)
			return backend.Admitted, 0
		case refused:
			return backend.Refused, at - now
		}
	}
	if s.b.ls.closed.Load() {
		return 0, 0
	}
	_, _, at, out := s.fromLease(now, int64(n), 0, permits, period, wins)
	switch out {
	case took:
		return backend.Admitted, 0
	case refused:
		return backend.Refused, at - now
	}
	return 0, 0
}

// Reserve decides from the store's lease when it has one at req's rate (see Leases),
// else as reserveCall: one script run, alone or with the calls that queue behind one in
// flight. See backend.Store.
func (s *store) Reserve(ctx context.Context, req backend.Request) (backend.Grant, error) {
	if s.lz == nil {
		return s.reserveCall(ctx, req)
	}
	if err := decorate.ContextErr(ctx); err != nil {
		return backend.Grant{}, err
	}
	if req.N < 1 || req.N > req.Permits || req.Period <= 0 || s.b.ls.closed.Load() {
		return s.reserveCall(ctx, req)
	}
	lz := s.lz
	now := int64(req.Now)
	if now == 0 {
		now = int64(s.clk.Now())
	}
	mw := int64(max(req.MaxWait, 0))
	switch l, j, at, out := s.fromLease(now, int64(req.N), mw, req.Permits, req.Period, req.Windows); out {
	case took:
		prev := l.s0 + j*l.t
		return backend.Grant{Verdict: backend.Admitted, Wait: time.Duration(at - now), Prev: prev,
			Next: prev + int64(req.N)*l.t, At: at - l.loOff, Epoch: l.epoch}, nil
	case refused:
		return backend.Grant{Verdict: backend.Refused, Wait: time.Duration(at - now)}, nil
	}
	g, err := s.reserveCall(ctx, req)
	if err != nil {
		return g, err
	}
	lz.count.Add(int64(req.N))
	lz.rtt.Store(int64(s.clk.Now()) - now)
	switch g.Verdict {
	case backend.Admitted:
		if g.Next == 0 { // nothing reserved: the failure policy's
			return g, nil
		}
		lz.lead.Store(g.Next - g.At + int64(g.Wait))
		if h := s.b.admitHook; h != nil {
			h(s.key, g.At, false, req.N)
		}
	case backend.Refused:
		t, _, tol := weight(req.Permits, req.Period, req.N)
		lz.lead.Store(int64(g.Wait) + max(tol, t))
	default:
		return g, nil
	}
	s.startLease(now, &req)
	return g, nil
}

// cancelLeased gives a canceled reservation of the store's lease back to the lease, when
// it is the latest taken from it and its permit time has not come: it reports whether the
// grant was the lease's (the one in use, the next one, or the last taken out of them,
// which may have gone back to Redis already). Any other is given back to Redis, as a
// reservation made there (which gives nothing back once its permit time has passed on
// the server's clock).
func (s *store) cancelLeased(ctx context.Context, t backend.Grant) bool {
	if decorate.ContextErr(ctx) != nil {
		return false
	}
	for _, l := range [3]*lease{s.lz.cur.Load(), s.lz.next.Load(), s.lz.gone.Load()} {
		if l == nil || t.Epoch != l.epoch || t.Prev < l.s0 || t.Next > l.s0+l.k*l.t || (t.Prev-l.s0)%l.t != 0 {
			continue
		}
		if l.cursor.Load() > l.k && t.Next > l.s0+(l.kept.Load()-1)*l.t {
			continue // given back: a slot from Redis, not from l
		}
		if int64(s.clk.Now()) >= t.At+l.loOff {
			return true // its permit time has passed: it was used, nothing goes back
		}
		i, e := (t.Prev-l.s0)/l.t, (t.Next-l.s0)/l.t
		if l.cursor.CompareAndSwap(e, i) {
			return true
		}
		if s.cancel(ctx, t) {
			s.b.ls.used.Add(i - e)
			s.b.ls.returned.Add(e - i)
		}
		return true
	}
	return false
}
