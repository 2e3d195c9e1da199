package rlcore

import (
	"context"
	"slices"
	"sync"

	"github.com/resilience4go/resilience4go/ratelimit/backend"

	"github.com/resilience4go/resilience4go/internal/sat"
)

// Multi is the state of a limiter's further windows (Rate.More): one TAT for each,
// decided together with the limiter's Schedule, which holds the TAT of its Permits per
// Period, under one lock. A call at now for n permits that may wait up to maxWait waits
// the longest of each window's GCRA wait, max(TAT, now) - now - (Permits-n)·T; refused
// when that is more than maxWait, with it as the retry-after (at that instant every
// window has room), else admitted at t = now + wait, every window's TAT moving to
// max(TAT, t) + n·T. So each window keeps GCRA's bound on its own: no window of length d
// holds more than Permits + ⌊d/T⌋ of its permits.
//
// The freed slots of the Schedule are not used while a rate has further windows: a
// Cancel gives a window's permits back when its reservation is the last one of that
// window (its TAT moves back) and one of the latest Recent reservations (whose slots the
// Multi keeps, so that a Reservation stays as small as a limiter without windows needs),
// and the Schedule's own as Schedule.GiveBack does.
//
// The windows are those of the rate the Multi was last given (Use, Move), not the
// caller's: a call that read the rate just before a change of windows and decides just
// after it is decided by the windows in force, each TAT with its own window's T, never
// with another's.
type Multi struct {
	mu     sync.Mutex
	win    *Rate // the rate whose windows tat holds; nil: the caller's
	tat    [MaxMore]int64
	recent [Recent]taken // the slots of the latest reservations, in a ring
	pos    uint8         // the ring's next place
}

// Recent is how many of the latest reservations a Multi keeps the further windows' slots
// of, for their Cancel.
const Recent = 4

// taken is the slots one reservation took on the further windows, each as the TAT before
// and after, and the end of its slot on the Schedule, which names it (0: none).
type taken struct {
	id   int64
	slot [MaxMore][2]int64
}

// Use makes r the rate whose windows m keeps, before m's first use (Move changes it).
func (m *Multi) Use(r *Rate) {
	m.mu.Lock()
	m.win = r
	m.mu.Unlock()
}

// windows returns the rate whose further windows m's TATs are: the one m was given, else
// r; r itself when it has the same windows (the same Cfg.Windows), which may be at a
// local share (see Rate.LocalShare), so that a limiter whose store answers Local decides
// every window at its share. Called with m.mu held.
func (m *Multi) windows(r *Rate) *Rate {
	if m.win == nil || r.Cfg.Windows == m.win.Cfg.Windows {
		return r
	}
	return m.win
}

// Take reserves n permits (1..r.Limit) at now for a call that may wait up to maxWait, on
// s, the schedule of r's Permits per Period, and on every further window m keeps, all or
// none. Admitted, it returns the reservation's slots, its At and Delay, OK set (the
// caller sets Base and Epoch), and the wait; refused, the retry-after as the wait.
func (m *Multi) Take(s *Schedule, r *Rate, n int, now, maxWait int64) (res Reservation, wait int64, ok bool) {
	inc0, tol0 := r.Weight(n)
	m.mu.Lock()
	defer m.mu.Unlock()
	w := m.windows(r)
	for {
		p0 := s.TAT.Load()
		if uint64(p0)-MaxInt64 <= 1 { // saturated or dead: as GCRA, with the TAT as Prev
			return Reservation{Prev: p0, Next: p0}, MaxInt64, false
		}
		wait = sat.Sub(max(p0, now), now) - tol0
		for i := range w.NMore {
			tat := m.tat[i]
			if tat == MaxInt64 {
				return Reservation{}, MaxInt64, false
			}
			_, tol := w.More[i].Weight(n)
			wait = max(wait, sat.Sub(max(tat, now), now)-tol)
		}
		if wait > maxWait {
			return Reservation{}, wait, false
		}
		wait = max(wait, 0)
		t := sat.Add(now, wait)
		next0 := sat.Add(max(p0, t), inc0)
		if !s.TAT.CompareAndSwap(p0, next0) {
			continue // a call decided on a rate without windows moved it (a Reconfigure)
		}
		k := m.pos
		m.pos = (m.pos + 1) % Recent
		e := &m.recent[k]
		e.id = next0
		for i := range w.NMore {
			inc, _ := w.More[i].Weight(n)
			e.slot[i] = [2]int64{m.tat[i], sat.Add(max(m.tat[i], t), inc)}
			m.tat[i] = e.slot[i][1]
		}
		for i := w.NMore; i < MaxMore; i++ {
			e.slot[i] = [2]int64{}
		}
		res = Reservation{Sched: s, Store: windowsStore{m}, Prev: p0, Next: next0, At: t, Delay: timeDuration(wait),
			OK: true, Gen: int64(k)}
		return res, wait, true
	}
}

// giveBack gives back the slots of r, whose permit time has not passed at now: the
// Schedule's slot as Schedule.GiveBack does; and, when r is one of the Recent latest
// reservations, on each further window whose TAT is still the reservation's end, the TAT
// moves back to its start.
func (m *Multi) giveBack(r *Reservation, now int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r.Sched.GiveBack(r.Prev, r.Next, now)
	e := &m.recent[uint64(r.Gen)%Recent]
	if e.id != r.Next || e.id == 0 { // not one of the latest: the windows keep its slots
		return
	}
	e.id = 0
	for i := range e.slot {
		if sl := e.slot[i]; sl[1] != 0 && m.tat[i] == sl[1] {
			m.tat[i] = sl[0]
		}
	}
}

// NextFree is how long after now a single permit is free on s and every further window
// of r, ≥ 0: the longest of their waits.
func (m *Multi) NextFree(s *Schedule, r *Rate, now int64) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	wait := int64(MaxInt64)
	if tat := s.TAT.Load(); tat != MaxInt64 {
		wait = sat.Sub(max(tat, now), now) - r.Tau
	}
	mw := m.windows(r)
	for i := range mw.NMore {
		w := &mw.More[i]
		wait = max(wait, sat.Sub(max(m.tat[i], now), now)-w.Tau)
	}
	return max(wait, 0)
}

// Available is how many single permits a call at now could take without waiting, on s
// and every further window of r: the fewest of them, at most r.Limit.
func (m *Multi) Available(s *Schedule, r *Rate, now int64) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := r.Limit
	switch tat := s.TAT.Load(); tat {
	case MaxInt64:
		return 0
	case DeadTAT:
	default:
		n = min(n, AvailableAt(tat, r.Interval, r.Tau, now, r.Cfg.Permits))
	}
	mw := m.windows(r)
	for i := range mw.NMore {
		w := &mw.More[i]
		if m.tat[i] == MaxInt64 {
			return 0
		}
		n = min(n, AvailableAt(m.tat[i], w.Interval, w.Tau, now, w.Permits))
	}
	return n
}

// Change moves the further windows to those of nr (see Move). The reservations granted
// before give nothing back when canceled after it (b's epoch moves, under its conversion
// lock).
func (m *Multi) Change(b *Base, nr *Rate) {
	b.Conv.Lock()
	defer b.Conv.Unlock()
	m.Move(nr)
	b.Epoch.Add(1)
}

// Move moves the further windows from those m keeps to those of nr, which m keeps from
// then on: a window of nr that m had too (the same Permits and Period) keeps its TAT, a
// new one starts with its whole burst free. The caller moves the epoch, under the
// conversion lock.
func (m *Multi) Move(nr *Rate) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := m.windows(nr)
	var tat [MaxMore]int64
	for i := range nr.NMore {
		for j := range old.NMore {
			if nr.More[i].Permits == old.More[j].Permits && nr.More[i].Period == old.More[j].Period {
				tat[i] = m.tat[j]
				break
			}
		}
	}
	m.tat, m.win = tat, nr
	m.recent = [Recent]taken{}
}

// Ahead is how far the latest TAT, of s and of every further window of r, runs ahead of
// now: how long until every window's full burst is free (≤ 0: now).
func (m *Multi) Ahead(s *Schedule, r *Rate, now int64) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := s.TAT.Load()
	for i := range m.windows(r).NMore {
		t = max(t, m.tat[i])
	}
	return sat.Sub(t, now)
}

// IdleAt is the clock time from which the further windows owe nothing: their latest TAT.
func (m *Multi) IdleAt() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Max(m.tat[:])
}

// Kill is s.Kill(idleBy) that also waits for every further window to be idle by idleBy:
// under the lock, so that no call takes from the windows between the check and the mark.
func (m *Multi) Kill(s *Schedule, idleBy int64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if slices.Max(m.tat[:]) > idleBy {
		return false
	}
	return s.Kill(idleBy)
}

// KillInto is s.KillTAT() that also copies the TATs of m's further windows to dst, a
// Multi not in use yet: under m's lock, so that no call takes from the windows between
// the copy and the mark. It returns s's TAT before the mark.
func (m *Multi) KillInto(s *Schedule, dst *Multi) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	dst.tat, dst.win = m.tat, m.win
	return s.KillTAT()
}

// Store returns what a Reservation of m holds as its Store, with its slot as Gen: so that
// a Reservation of a limiter without windows is no larger for them.
func (m *Multi) Store() backend.Store { return windowsStore{m} }

// windowsStore marks a Reservation as taken from a Multi too (Reservation.Cancel gives it
// back in-process). It is a backend.Store only to fit the Reservation's field: its
// methods are never called.
type windowsStore struct{ m *Multi }

func (windowsStore) Reserve(context.Context, backend.Request) (backend.Grant, error) {
	return backend.Grant{Verdict: backend.Refused}, nil
}
func (windowsStore) Cancel(context.Context, backend.Grant) {}
func (windowsStore) Available(context.Context, backend.Request) (int, bool) {
	return 0, false
}
