package redis

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/internal/gcra"
)

// The work of leases off the decisions' path: reserving the next lease, giving back what
// is left of one, and Close.

// leaseMargin widens the mapping of the server's instants to the process's clock: the
// server's TIME has a resolution of a microsecond.
const leaseMargin = int64(time.Microsecond)

// leaseProbe is the size of a lease that tries the pace of a store's callers when its
// rate, as seen, would not use a larger one before its slots pass.
const leaseProbe = 16

// leaseNoise is how long a probing lease's slots last at least, beyond 4 round trips:
// the scheduling delays of a loaded machine.
const leaseNoise = time.Millisecond

// backendLeases is a Backend's leases: the live ones (for Close and the counts), the
// background runs in flight, and the counts of retired leases.
type backendLeases struct {
	mu     sync.Mutex
	live   map[*lease]struct{}
	closed atomic.Bool // set under mu
	runs   sync.WaitGroup

	leased, used, returned, wasted atomic.Int64
}

// spawn runs f on a goroutine of its own that Close waits for; none once closed.
func (b *Backend) spawn(f func()) bool {
	b.ls.mu.Lock()
	defer b.ls.mu.Unlock()
	if b.ls.closed.Load() {
		return false
	}
	b.ls.runs.Add(1)
	go func() {
		defer b.ls.runs.Done()
		f()
	}()
	return true
}

// closeLeases is Close's part for the leases: it stops reserving leases, waits for the
// runs that reserve one, and gives back to Redis the slots of its leases that have not
// started yet (see Leases). A second call does nothing.
func (b *Backend) closeLeases() {
	b.ls.mu.Lock()
	if b.ls.closed.Load() {
		b.ls.mu.Unlock()
		return
	}
	b.ls.closed.Store(true)
	b.ls.mu.Unlock()
	b.ls.runs.Wait()
	b.ls.mu.Lock()
	live := make([]*lease, 0, len(b.ls.live))
	for l := range b.ls.live {
		live = append(live, l)
	}
	b.ls.mu.Unlock()
	for _, l := range live {
		l.s.unset(l)
		l.s.giveBackLease(l)
	}
}

// size returns the size of the store's next lease, from the rate its calls ask for
// permits: 0 when it would be below 2.
func (s *store) size(now int64, req *backend.Request) int64 {
	lz, life := s.lz, int64(s.b.cfg.Lease)
	n := lz.count.Load()
	if l := lz.cur.Load(); l != nil {
		n += l.usedNow()
	}
	at := lz.markAt.Load()
	switch {
	case at == 0:
		if lz.markAt.CompareAndSwap(0, now) {
			lz.markN.Store(n)
		}
	case now-at >= life/2 && lz.markAt.CompareAndSwap(at, now):
		lz.k.Store(sat.Mul(n-lz.markN.Swap(n), life) / max(now-at, 1))
	}
	t, _, _ := weight(req.Permits, req.Period, 1)
	k := min(lz.k.Load(), int64(req.Permits), life/t+1) // no more than a life's worth at the rate
	// Slot i of a lease starts lead + i·T after it is reserved, and is used about i/r
	// after, at the store's rate r = k/life: slots that would start before their use
	// would pass unused.
	// A caller that waits for each round trip shows a rate that the round trip bounds,
	// not its own: a lease of at most leaseProbe permits tries its pace (its slots
	// passing unused stop the leases for a life, see giveBackLease).
	if r := float64(k) / float64(life); r*float64(t) < 1 {
		// Slots that start within a round trip, or a scheduling delay, pass at once.
		probe := max(leaseProbe, (4*lz.rtt.Load()+int64(leaseNoise))/t)
		k = min(k, max(int64(float64(lz.lead.Load())*r/(1-r*float64(t))), probe))
	}
	for _, w := range req.Windows {
		k = min(k, int64(w.Permits), life/int64(gcra.Interval(w.Permits, w.Period))+1)
	}
	if k < 2 {
		return 0
	}
	return k
}

// startLease reserves the store's next lease in the background, when none is on its way,
// Redis did not fail lately, and the store's rate is worth one.
func (s *store) startLease(now int64, req *backend.Request) {
	lz := s.lz
	if lz.busy.Load() || now < lz.retry.Load() {
		return
	}
	k := s.size(now, req)
	if k == 0 || !lz.busy.CompareAndSwap(false, true) {
		return
	}
	r := backend.Request{N: int(k), MaxWait: s.b.cfg.Lease, Permits: req.Permits, Period: req.Period, Windows: req.Windows}
	if !s.b.spawn(func() { s.reserveLease(r) }) {
		lz.busy.Store(false)
	}
}

// reserveLease reserves a lease of req.N permits whose permit times are within a life
// (req.MaxWait), and installs it.
func (s *store) reserveLease(req backend.Request) {
	lz := s.lz
	defer lz.busy.Store(false)
	for {
		send := int64(s.clk.Now())
		g, _ := s.reserveCall(context.Background(), req)
		recv := int64(s.clk.Now())
		lz.rtt.Store(recv - send)
		switch {
		case g.Verdict == backend.Admitted && g.Next != 0:
			if l := s.newLease(g, &req, send, recv); l != nil {
				s.install(l)
			}
		case g.Verdict == backend.Refused && g.Wait > req.MaxWait:
			// Redis refused: the quota is booked over a life ahead. Each permit fewer
			// brings the batch's permit time one T nearer: a smaller lease that fits
			// within a life is asked for at once, if one of 2 or more does; otherwise,
			// none until one of 2 would fit.
			// With windows, the pair that refused is not told: the longest T is taken.
			t, _, _ := weight(req.Permits, req.Period, 1)
			for _, w := range req.Windows {
				t = max(t, int64(gcra.Interval(w.Permits, w.Period)))
			}
			over := (int64(g.Wait-req.MaxWait) + t - 1) / t
			if int64(req.N)-over >= 2 {
				req.N -= int(over)
				continue
			}
			lz.hold.Store(recv + max(int64(g.Wait-req.MaxWait)-int64(req.N-2)*t, 0))
		default:
			lz.retry.Store(recv + int64(s.b.cfg.ProbeInterval))
		}
		return
	}
}

// newLease is the lease of the grant g of req, whose script run was sent at the clock
// time send and answered at recv; nil when the windows' slots are not known (the windows
// changed meanwhile), after giving the grant back.
func (s *store) newLease(g backend.Grant, req *backend.Request, send, recv int64) *lease {
	t, _, _ := weight(req.Permits, req.Period, 1)
	k := int64(req.N)
	now := g.At - int64(g.Wait) // the server's clock when it decided
	hiOff, loOff := send-now-leaseMargin, recv-now+leaseMargin
	s.lz.lead.Store(g.Next - now)
	l := &lease{s: s, permits: req.Permits, period: req.Period, k: k, t: t, s0: g.Next - k*t, loOff: loOff,
		epoch: g.Epoch, nw: len(req.Windows)}
	l.h0 = l.s0 + hiOff
	l.l0 = l.s0 - int64(req.Permits-1)*t + loOff
	if l.nw > 0 {
		w, slots, ok := s.recentOf(g)
		if w == nil || !ok {
			s.giveBack(g)
			return nil
		}
		l.wins, l.w = &req.Windows[0], w
		for m := range l.nw {
			l.wt[m] = w.t[m]
			l.ws[m] = slots[m][1] - k*w.t[m]
			l.wh[m] = l.ws[m] + hiOff
			l.wl[m] = l.ws[m] - int64(w.permits[m]-1)*w.t[m] + loOff
		}
	}
	return l
}

// install makes l the store's lease, or its next one when it has one in use, and sets
// the end of its life; once the backend is closed, it gives l back at once.
func (s *store) install(l *lease) {
	b := s.b
	b.ls.mu.Lock()
	if b.ls.closed.Load() {
		b.ls.mu.Unlock()
		b.ls.leased.Add(l.k) // counted, as what giveBackLease counts of it is
		s.giveBackLease(l)
		return
	}
	if b.ls.live == nil {
		b.ls.live = make(map[*lease]struct{})
	}
	b.ls.live[l] = struct{}{}
	b.ls.leased.Add(l.k)
	// Its life ends half a life after its last slot's permit time (within a life of its
	// reservation): slots not used by then are not wanted.
	last := l.l0 + (l.k-1)*l.t
	for m := range l.nw {
		last = max(last, l.wl[m]+(l.k-1)*l.wt[m])
	}
	end := time.Duration(max(last-int64(s.clk.Now()), 0)) + b.cfg.Lease/2
	l.timer = time.AfterFunc(end, func() { b.spawn(func() { s.drop(l) }) })
	b.ls.mu.Unlock()
	if !s.lz.cur.CompareAndSwap(nil, l) {
		if old := s.lz.next.Swap(l); old != nil {
			s.drop(old)
		}
	}
}

// unset takes l out of the store's leases.
func (s *store) unset(l *lease) {
	s.lz.cur.CompareAndSwap(l, nil)
	s.lz.next.CompareAndSwap(l, nil)
}

// drop takes l out of the store's leases and gives back what is left of it.
func (s *store) drop(l *lease) {
	s.unset(l)
	s.giveBackLease(l)
}

// retire gives back what is left of l, taken out of the store's leases already, in the
// background.
func (s *store) retire(l *lease) {
	if l.cursor.Load() > l.k {
		return
	}
	s.b.spawn(func() { s.giveBackLease(l) })
}

// giveBackLease ends l: no slot of it is taken from now on, and those whose start has
// not passed are given back to Redis (one script run), as a canceled reservation's.
func (s *store) giveBackLease(l *lease) {
	c := l.cursor.Swap(l.k + 1)
	if c > l.k {
		return
	}
	b := s.b
	b.ls.mu.Lock()
	delete(b.ls.live, l)
	b.ls.mu.Unlock()
	if l.timer != nil {
		l.timer.Stop()
	}
	// Every slot from the cursor on is unused: all go back (the script keeps none of
	// them that has passed on its clock). Those whose start is still ahead count as
	// returned, the others as wasted.
	now := int64(s.clk.Now())
	j := c
	if d := now - l.h0; d >= j*l.t {
		j = min(d/l.t+1, l.k)
	}
	used := c - l.skipped.Load()
	var back int64
	if c < l.k && s.giveSlots(l, c) {
		back = l.k - j
	}
	if waste := l.k - used - back; 2*waste > l.k {
		// Most of it passed unused: the store's calls come slower than its slots start
		// (the shared schedule is not booked ahead). No lease for a life: per call.
		s.lz.retry.Store(now + int64(b.cfg.Lease))
	}
	s.lz.count.Add(used)
	b.ls.used.Add(used)
	b.ls.returned.Add(back)
	b.ls.wasted.Add(l.k - used - back)
}

// giveSlots runs the script's cancel for l's slots from j on, on every pair, with their
// end as the permit time: none of them was used, so whether their time has passed does
// not matter. It reports whether Redis took them back.
func (s *store) giveSlots(l *lease, j int64) bool {
	prev, next := l.s0+j*l.t, l.s0+l.k*l.t
	pS, pN := split(prev)
	nS, nN := split(next)
	argv := make([]any, cmdHeader+l.nw, cmdHeader+l.nw+8+4*l.nw)
	argv = append(argv, "c", pS, pN, nS, nN, nS, nN, l.epoch)
	for m := range l.nw {
		ps, pn := split(l.ws[m] + j*l.wt[m])
		xs, xn := split(l.ws[m] + l.k*l.wt[m])
		argv = append(argv, ps, pn, xs, xn)
	}
	var w *winSet
	if l.nw > 0 {
		w = l.w
	}
	res, err := s.run(context.Background(), w, argv)
	return err == nil && len(res) == 1 && res[0] == 1
}
