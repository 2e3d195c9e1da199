package redis

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/internal/gcra"
)

// The further windows of a limiter (backend.Request.Windows) on Redis: each window's TAT
// lives in a key of its own, "{prefix+name}:win:<permits>:<period in ns>", with the same
// hash tag as the limiter's TAT key, so that a Redis Cluster keeps them all in one slot.
// A call with windows is one run of the script's 'w' (see gcraScript), which reads every
// TAT, decides them together, all or none, and writes those that moved: one round trip,
// as without windows. Each window key expires when its burst is full again. A window key
// is named by its rate, so a change of Windows keeps the TAT of each window it keeps, and
// a new window starts with its whole burst free.

// maxWindows is how many further windows a Request carries at most.
const maxWindows = 3

// winSet is one list of further windows, as the limiter's rate holds it: the keys of a
// script run with them (the TAT key, the freed-slots key, then each window's, boxed once)
// and each window's rate. It is made at the first call that brings the list, and kept by
// the list's address, which the limiter keeps for the life of its configuration.
type winSet struct {
	src     *backend.Window // &Windows[0] of the list it was made for
	n       int
	keys    []string
	args    []any
	nkeys   any
	permits [maxWindows]int
	periods [maxWindows]time.Duration
	t       [maxWindows]int64 // each window's emission interval T, in ns
	rate    []any             // each window's T as a pair, and Permits ('v')
}

// count is how many windows w has: 0 for nil.
func (w *winSet) count() int {
	if w == nil {
		return 0
	}
	return w.n
}

// of reports whether w was made for the list ws.
func (w *winSet) of(ws []backend.Window) bool {
	return w != nil && len(ws) == w.n && &ws[0] == w.src
}

// same reports whether w and o are the same windows (a new configuration may bring the
// same ones in a new list).
func (w *winSet) same(o *winSet) bool {
	return w != nil && o != nil && w.n == o.n && w.permits == o.permits && w.periods == o.periods
}

// winsOf returns the winSet of ws, not empty: the last call's when it is the same list.
func (s *store) winsOf(ws []backend.Window) *winSet {
	if w := s.wins.Load(); w.of(ws) {
		return w
	}
	n := min(len(ws), maxWindows)
	w := &winSet{src: &ws[0], n: n, keys: make([]string, 2, 2+n), nkeys: strconv.Itoa(2 + n)}
	copy(w.keys, s.keys)
	for i := range n {
		w.keys = append(w.keys, windowKey(s.keys[0], ws[i]))
		w.permits[i], w.periods[i] = ws[i].Permits, ws[i].Period
		w.t[i] = int64(gcra.Interval(ws[i].Permits, ws[i].Period))
		tS, tN := split(w.t[i])
		w.rate = append(w.rate, tS, tN, int64(ws[i].Permits))
	}
	for _, k := range w.keys {
		w.args = append(w.args, k)
	}
	s.wins.Store(w)
	return w
}

// windowKey returns the key of the window w of the limiter whose TAT key is key.
func windowKey(key string, w backend.Window) string {
	return fmt.Sprintf("%s:win:%d:%d", key, w.Permits, int64(w.Period))
}

// argsWin is argsOf for a request with further windows.
func (s *store) argsWin(req backend.Request) *rateArgs {
	w := s.winsOf(req.Windows)
	if a := s.last.Load(); a != nil && a.w == w && a.n == req.N && a.permits == req.Permits && a.period == req.Period {
		return a
	}
	t, inc, tol := weight(req.Permits, req.Period, req.N)
	iS, iN := split(inc)
	lS, lN := split(tol)
	tS, tN := split(t)
	a := &rateArgs{permits: req.Permits, period: req.Period, n: req.N, t: t, inc: inc, tol: tol,
		args: [7]any{iS, iN, lS, lN, tS, tN, int64(req.Permits)}, w: w}
	for i := range w.n {
		wi := sat.Mul(int64(req.N), w.t[i])
		wl := sat.Mul(int64(max(w.permits[i]-req.N, 0)), w.t[i])
		is, in := split(wi)
		ls, ln := split(wl)
		a.wargs = append(a.wargs, is, in, ls, ln)
	}
	s.last.Store(a)
	return a
}

// decideWin is decide for requests with the further windows w, all in one script run
// ('w'): each answer is a record of 7 + 2·windows numbers, {code, k, wait, count, prev,
// each window's prev}, wait, prev and each window's prev as pairs.
func (s *store) decideWin(ctx context.Context, w *winSet, batch []*waiter) error {
	res, ok, err := s.send(ctx, w, "w", batch)
	if !ok {
		return err
	}
	rec := 7 + 2*w.n
	i, j := 0, 2
	if len(res) >= 2 {
		now := join(res[0], res[1])
		for ; j+rec <= len(res) && i < len(batch); j += rec {
			code, k := res[j], int(res[j+1])
			if k < 1 || k > len(batch)-i || (code == 1 && k != 1) || code > 1 {
				break
			}
			wait := max(join(res[j+2], res[j+3]), 0)
			if code == 0 {
				// Until every pair's burst is free again: the furthest of their TATs.
				var full int64
				for m := range 1 + w.n {
					if tat := join(res[j+5+2*m], res[j+6+2*m]); tat != 0 {
						full = max(full, sat.Sub(tat, now))
					}
				}
				for _, x := range batch[i : i+k] {
					x.g, x.now = backend.Grant{Verdict: backend.Refused, Wait: time.Duration(wait), Full: time.Duration(full)}, now
				}
				i += k
				continue
			}
			x := batch[i]
			x.now = now
			at := int64(sat.Add(time.Duration(now), time.Duration(wait)))
			prev := join(res[j+5], res[j+6])
			next := int64(sat.Add(time.Duration(max(prev, at)), time.Duration(x.a.inc)))
			x.g = backend.Grant{Verdict: backend.Admitted, Wait: time.Duration(wait), Prev: prev, Next: next, At: at, Epoch: res[j+4]}
			g := winGrant{next: next, at: at, w: w}
			// What the grant leaves over every pair, for the key's quota in a Decision.
			full := sat.Sub(next, now)
			free := gcra.Available(full, x.a.t, sat.Mul(int64(x.a.permits-1), x.a.t), x.a.permits)
			for m := range w.n {
				p := join(res[j+7+2*m], res[j+8+2*m])
				g.slot[m] = [2]int64{p, int64(sat.Add(time.Duration(max(p, at)), time.Duration(sat.Mul(int64(x.a.n), w.t[m]))))}
				ahead := sat.Sub(g.slot[m][1], now)
				full = max(full, ahead)
				free = min(free, gcra.Available(ahead, w.t[m], sat.Mul(int64(w.permits[m]-1), w.t[m]), w.permits[m]))
			}
			x.g.Free, x.g.Full = free, time.Duration(max(full, 1))
			s.remember(g)
			i++
		}
	}
	if i != len(batch) || j != len(res) {
		s.unexpected(res, batch[i:])
	}
	return nil
}

// recentGrants is how many of its latest grants with windows a store keeps the windows'
// slots of, for their Cancel: as many as an in-process limiter keeps.
const recentGrants = 4

// winGrant is the further windows' slots of one grant: each window's TAT before and after
// it; the grant is named by the end of its slot (next) and its permit time (at).
type winGrant struct {
	next, at int64
	w        *winSet
	slot     [maxWindows][2]int64
}

// remember keeps g as the latest grant with windows.
func (s *store) remember(g winGrant) {
	s.recentMu.Lock()
	s.recent[s.recentAt] = g
	s.recentAt = (s.recentAt + 1) % recentGrants
	s.recentMu.Unlock()
}

// recentOf returns, and forgets, the further windows' slots of the grant t when it is one
// of the latest grants with windows; w nil when it is not (its Cancel gives back the
// Permits-per-Period slot alone). ok is false when the windows changed since it was
// granted (a change of Permits, Period or MaxWait alone keeps them): its Cancel then
// gives nothing back, as an in-process limiter's.
func (s *store) recentOf(t backend.Grant) (w *winSet, slots [maxWindows][2]int64, ok bool) {
	s.recentMu.Lock()
	defer s.recentMu.Unlock()
	for i := range s.recent {
		if g := &s.recent[i]; g.w != nil && g.next == t.Next && g.at == t.At {
			w, slots = g.w, g.slot
			*g = winGrant{}
			return w, slots, w.same(s.wins.Load())
		}
	}
	return nil, slots, true
}

// availableWin is Available with further windows: the fewest single permits free now
// on the TAT and on each window's ('v'), at most req.Permits.
func (s *store) availableWin(ctx context.Context, req backend.Request) (int, bool) {
	if decorate.ContextErr(ctx) != nil {
		return 0, false
	}
	w := s.winsOf(req.Windows)
	tS, tN := split(int64(gcra.Interval(req.Permits, req.Period)))
	argv := append(make([]any, cmdHeader+w.n, cmdHeader+w.n+4+3*w.n), "v", tS, tN, int64(req.Permits))
	argv = append(argv, w.rate...)
	res, err := s.run(ctx, w, argv)
	if err == nil && len(res) != 4+2*w.n {
		err = fmt.Errorf("ratelimit/redis: unexpected reply %v from the script on %s", res, s.keys[0])
		s.keyFailed(err)
	}
	if err != nil {
		return s.availableFailed(ctx, req.Permits)
	}
	now := join(res[0], res[1])
	t, _, tau := weight(req.Permits, req.Period, 1)
	n := req.Permits
	if tat := join(res[2], res[3]); tat != 0 {
		n = gcra.Available(tat-now, t, tau, req.Permits)
	}
	for i := range w.n {
		m := w.permits[i]
		if tat := join(res[4+2*i], res[5+2*i]); tat != 0 {
			m = gcra.Available(tat-now, w.t[i], sat.Mul(int64(w.permits[i]-1), w.t[i]), w.permits[i])
		}
		n = min(n, m)
	}
	return n, true
}
