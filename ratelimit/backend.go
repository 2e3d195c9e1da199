package ratelimit

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// WithBackend keeps the limiter's state in b, e.g. Redis (package ratelimit/redis), shared
// by every limiter, in any process, that has the same instance id (its Name) and the same
// backend: each call asks b's store for its permits instead of the in-process schedule,
// with the same semantics (GCRA, waiting within MaxWait, cancellation, the retry-after),
// on the store's clock. Default nil: the state is in-process, and the limiter limits its
// own process only. A registry sets a default for all its limiters with
// resilience.WithRateLimiterBackend; WithBackend on a spec wins over it. Package
// ratelimit/backend is the contract a backend implements.
func WithBackend(b backend.Backend) Option { return func(s *settings) { s.Backend = b } }

// bind connects the limiter to its backend's store, if it has one. A Backend that
// returns neither a Store nor an error fails the build with R4C-REG-010.
func (l *Limiter) bind(b backend.Backend) error {
	if b == nil {
		return nil
	}
	st, err := b.Bind(backend.Binding{ID: l.events.ID, Clock: l.base.Clk, Listener: l.relay})
	if err != nil {
		return err
	}
	if st == nil {
		return r4c.Errorf(r4c.BadSpec, "rateLimiter.backend", "", "the backend's Bind returned no Store")
	}
	l.store, l.shares = st, b
	l.taker, _ = st.(rlcore.Taker)
	return nil
}

// reserveBackend asks l's store for n permits within maxWait at the rate r, with a
// Grant's Wait never negative; now is the clock's reading for the store, 0 for none.
func (l *Limiter) reserveBackend(ctx context.Context, r *rate, n int, maxWait time.Duration, now int64) (backend.Grant, error) {
	g, err := l.store.Reserve(ctx, backend.Request{N: n, MaxWait: maxWait, Permits: r.Cfg.Permits, Period: r.Cfg.Period,
		Windows: r.Wins, Now: time.Duration(now)})
	g.Wait = max(g.Wait, 0)
	return g, err
}

// backed is the mode of a limiter with a backend: its calls and AvailablePermits ask
// l.store. The backend's clock decides permits; the limiter's clock is read to stamp
// events, to date the retry-after its rejections report, and to decide in-process when
// the store answers Local.
type backed struct{}

// local takes n permits in-process, within maxWait, for a store that answered Local, at
// the rate r's local share, on its further windows too when it has some (as a limiter
// without a backend does, each at its local share). The share is the backend's now: when
// it changed since the last decision in-process, the schedule (its TAT, and the further
// windows' TATs) is kept as it is, as time, and read at the new share's rate.
//
// A refusal is not published here: the caller publishes it.
func (l *Limiter) local(r *rate, n int, maxWait int64) (rlcore.Reservation, int64, bool) {
	ep := l.base.Epoch.Load()
	now := l.now()
	lr := r.LocalShare(rlcore.LocalShare(l.shares))
	if lr.NMore > 0 {
		res, wait, ok := l.more.Take(&l.slots, lr, n, now, maxWait)
		if !ok {
			l.refused(now, wait)
			return rlcore.Reservation{Delay: time.Duration(wait)}, wait, false
		}
		res.Base, res.Epoch = &l.base, ep
		return res, wait, true
	}
	inc, tol := lr.Weight(n)
	prev, next, wait, ok := l.slots.Take(now, inc, tol, maxWait)
	if !ok {
		l.refused(now, wait)
		return rlcore.Reservation{Delay: time.Duration(wait)}, wait, false
	}
	return l.taken(prev, next, sat.Add(now, wait), time.Duration(wait), ep), wait, true
}

// refused records, with a backend, when the next permit is free after a refusal at now
// whose retry-after is wait: the rejections report it (ExceededError.RetryIn). It writes
// only a time that differs from the one recorded: the refusals that a store decides
// in-process (leases) mostly tell the same one, and the limiter's callers do not write a
// shared line for them.
func (l *Limiter) refused(now, wait int64) {
	if at := sat.Add(now, max(wait, 0)); l.retryAt.Load() != at {
		l.retryAt.Store(at)
	}
}

func (backed) tryAcquire(l *Limiter, r *rate, n int) error {
	ctx := context.Background()
	// The clock is read once before the store decides: a lease decides with it, and dates
	// its refusal with it.
	now := l.now()
	if l.taker != nil { // the store decides in-process (a lease), or says it cannot
		switch v, wait := l.taker.TryTake(now, n, r.Cfg.Permits, r.Cfg.Period, r.Wins); v {
		case backend.Admitted:
			l.admitted(ctx, 0)
			return nil
		case backend.Refused:
			l.refused(now, wait)
			return l.refuse(ctx, r, now, wait, l.rej.Plain)
		}
	}
	g, _ := l.reserveBackend(ctx, r, n, 0, now) // Background never ends: no error
	switch g.Verdict {
	case backend.Admitted:
		l.admitted(ctx, 0)
		return nil
	case backend.Local:
		if _, wait, ok := l.local(r, n, 0); !ok {
			return l.refuse(ctx, r, l.eventTime(), wait, l.rej.Plain)
		}
		l.admitted(ctx, 0)
		return nil
	}
	// Redis's retry-after counts from its answer: dated when it came, not before the round trip.
	at := l.now()
	l.refused(at, int64(g.Wait))
	return l.refuse(ctx, r, at, int64(g.Wait), l.rej.Plain)
}

func (backed) acquire(ctx context.Context, l *Limiter, r *rate, n int) error {
	if err := decorate.ContextErr(ctx); err != nil {
		// A call that arrives with a nil or done context asks the store nothing and
		// publishes nothing.
		return l.refuseOnArrival(ctx, err)
	}
	// A permit that comes after the deadline is useless: refuse it unreserved.
	limit, byDeadline := rlcore.WaitLimit(ctx, r.MaxWait)
	g, err := l.reserveBackend(ctx, r, n, time.Duration(limit), 0)
	if err != nil {
		return l.rejectContext(ctx, l.eventTime(), 0, err)
	}
	var res rlcore.Reservation
	at := int64(-1) // the clock time of the store's refusal, read once; -1: not read
	switch g.Verdict {
	case backend.Admitted:
		res = l.granted(g)
	case backend.Local:
		var wait int64
		if res, wait, _ = l.local(r, n, limit); !res.OK {
			g = backend.Grant{Verdict: backend.Refused, Wait: time.Duration(wait)}
		}
	default:
		at = l.now()
		l.refused(at, int64(g.Wait))
	}
	if !res.OK {
		if res, err = l.refuseGrant(ctx, r, at, g.Wait, rlcore.AfterDeadline(int64(g.Wait), limit, byDeadline, r.MaxWait)); err != nil {
			return err
		}
	}
	if res.Delay == 0 || r.Cfg.Shadow { // in shadow mode, a permit reserved ahead is not waited for
		l.admitted(ctx, 0)
		return nil
	}
	l.publishWaited(ctx, l.eventTime(), int64(res.Delay))
	return l.waitFor(ctx, res) // counted as an in-process limiter's, and as its scheduled async calls
}

// refuseGrant publishes and records the refusal of the call with ctx whose store (or local
// fallback) refused with the retry-after wait, at the clock time at (-1: not read yet), and
// returns it as refuseReserve does, with the limiter's rejection, also matching
// context.DeadlineExceeded when the permit comes after the call's deadline (deadline, from
// rlcore.AfterDeadline); in shadow mode, a reservation that holds nothing and nil.
func (l *Limiter) refuseGrant(ctx context.Context, r *rate, at int64, wait time.Duration, deadline bool) (rlcore.Reservation, error) {
	if at < 0 {
		at = l.eventTime()
	}
	var err error = l.rej.Plain
	if deadline {
		err = l.rej.ForContext(context.DeadlineExceeded)
	}
	res, err := l.refuseReserve(ctx, r, at, int64(wait), err)
	if err != nil {
		res.Delay = wait
	}
	return res, err
}

// reserve asks the store with context.Background(), whatever ctx is: ctx, the call's,
// goes with the events and the recorded refusal. A permit that would come after ctx's
// deadline is refused unreserved, with the limiter's rejection that also matches
// context.DeadlineExceeded, as acquire's.
func (backed) reserve(ctx context.Context, l *Limiter, r *rate, n int) (rlcore.Reservation, error) {
	limit, byDeadline := rlcore.WaitLimit(ctx, r.MaxWait)
	g, _ := l.reserveBackend(context.Background(), r, n, time.Duration(limit), 0)
	var res rlcore.Reservation
	at := int64(-1) // the clock time of the store's refusal, read once; -1: not read
	switch g.Verdict {
	case backend.Local:
		var wait int64
		var ok bool
		if res, wait, ok = l.local(r, n, limit); !ok {
			g = backend.Grant{Verdict: backend.Refused, Wait: time.Duration(wait)}
		}
	case backend.Admitted:
		res = l.granted(g)
	default:
		at = l.now()
		l.refused(at, int64(g.Wait))
	}
	if !res.OK {
		return l.refuseGrant(ctx, r, at, g.Wait, rlcore.AfterDeadline(int64(g.Wait), limit, byDeadline, r.MaxWait))
	}
	return res, l.delayed(ctx, r, l.eventTime(), &res)
}

func (backed) available(l *Limiter, r *rate) int {
	if n, ok := l.store.Available(context.Background(), backend.Request{Permits: r.Cfg.Permits, Period: r.Cfg.Period, Windows: r.Wins}); ok {
		return n
	}
	lr := r.LocalShare(rlcore.LocalShare(l.shares))
	if lr.NMore > 0 {
		return l.more.Available(&l.slots, lr, l.now())
	}
	return l.slots.Available(l.now(), lr.Interval, lr.Tau, lr.Cfg.Permits)
}

// eventTime reads the limiter's clock for an event's timestamp; without a listener or a
// recorder there is no event and no read.
func (l *Limiter) eventTime() int64 {
	if !l.events.Observed() {
		return 0
	}
	return l.now()
}
