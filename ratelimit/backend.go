package ratelimit

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
)

// WithBackend keeps the limiter's state in b, e.g. Redis (package ratelimit/redis), shared
// by every limiter, in any process, that has the same instance id (its Name) and the same
// backend: each call asks b's store for its permits instead of the in-process schedule,
// with the same semantics (GCRA, waiting within MaxWait, cancellation, the retry-after),
// on the store's clock. Default nil: the state is in-process, and the limiter limits its
// own process only. A registry sets a default for all its limiters with
// resilience.WithRateLimiterBackend; WithBackend on a spec wins over it. Package
// ratelimit/backend is the contract a backend implements.
func WithBackend(b backend.Backend) Option { return func(s *settings) { s.backend = b } }

// bind connects the limiter to its backend's store, if it has one. A Backend that
// returns neither a Store nor an error fails the build with R4C-REG-010.
func (l *Limiter) bind(b backend.Backend) error {
	if b == nil {
		return nil
	}
	st, err := b.Bind(backend.Binding{ID: l.events.ID, Clock: l.clk, Listener: l.relay})
	if err != nil {
		return err
	}
	if st == nil {
		return policy.Errorf(policy.CodeBadSpec, "rateLimiter.backend", "", "the backend's Bind returned no Store")
	}
	l.store, l.share = st, localShare(b)
	return nil
}

// storeListener returns the listener a Backend's stores publish the limiter's events
// through: its listener, and its recorder, which gets them with context.Background() (no
// call of the limiter's causes them where the store publishes them). nil when nobody
// listens or records.
func (l *Limiter) storeListener() policy.Listener {
	lis, rec := l.events.Listener, l.events.Rec
	if rec == nil {
		return lis
	}
	return func(e policy.Event) {
		lis.Publish(e)
		rec.Event(context.Background(), e)
	}
}

// localShare returns the share of b's stores' Local verdict: b.LocalShare(), at least 1.
func localShare(b backend.Backend) int { return max(b.LocalShare(), 1) }

// reserveBackend asks l's store for n permits within maxWait at the rate r, with a
// Grant's Wait never negative.
func (l *Limiter) reserveBackend(ctx context.Context, r *rate, n int, maxWait time.Duration) (backend.Grant, error) {
	g, err := l.store.Reserve(ctx, backend.Request{N: n, MaxWait: maxWait, Permits: r.cfg.Permits, Period: r.cfg.Period})
	g.Wait = max(g.Wait, 0)
	return g, err
}

// backed is the mode of a limiter with a backend: its calls and AvailablePermits ask
// l.store. The backend's clock decides permits; the limiter's clock is read to stamp
// events, to date the retry-after its rejections report, and to decide in-process when
// the store answers Local.
type backed struct{}

// local takes n permits in-process, within maxWait, for a store that answered Local, at
// the rate r's local share.
//
// A refusal is not published here: the caller publishes it.
func (l *Limiter) local(r *rate, n int, maxWait int64) (Reservation, int64, bool) {
	ep := l.epoch.Load()
	now := l.now()
	inc, tol := r.localShare(l.share).weight(n)
	prev, next, wait, ok := l.slots.take(now, inc, tol, maxWait)
	if !ok {
		l.refused(now, wait)
		return Reservation{delay: time.Duration(wait)}, wait, false
	}
	return Reservation{l: l, prev: prev, next: next, at: sat.Add(now, wait), delay: time.Duration(wait), ok: true, epoch: ep}, wait, true
}

// refused records, with a backend, when the next permit is free after a refusal at now
// whose retry-after is wait: the rejections report it (ExceededError.NextPermit).
func (l *Limiter) refused(now, wait int64) { l.retryAt.Store(sat.Add(now, max(wait, 0))) }

func (backed) tryAcquire(l *Limiter, r *rate, n int) error {
	ctx := context.Background()
	g, _ := l.reserveBackend(ctx, r, n, 0) // Background never ends: no error
	switch g.Verdict {
	case backend.Reserved, backend.Unlimited:
		l.admitted(ctx, 0)
		return nil
	case backend.Local:
		if _, wait, ok := l.local(r, n, 0); !ok {
			l.reject(ctx, l.eventTime(), wait, l.rej.Plain)
			return l.rej.Plain
		}
		l.admitted(ctx, 0)
		return nil
	}
	now := l.now()
	l.refused(now, int64(g.Wait))
	l.reject(ctx, now, int64(g.Wait), l.rej.Plain)
	return l.rej.Plain
}

func (backed) acquire(ctx context.Context, l *Limiter, r *rate, n int) error {
	if err := policy.ContextErr(ctx); err != nil {
		// A call that arrives with a nil or done context asks the store nothing and
		// publishes nothing.
		return l.refuseOnArrival(ctx, err)
	}
	// A permit that comes after the deadline is useless: refuse it unreserved (RL-8).
	limit, byDeadline := waitLimit(ctx, r.maxWait)
	g, err := l.reserveBackend(ctx, r, n, time.Duration(limit))
	if err != nil {
		return l.rejectContext(ctx, l.eventTime(), 0, err)
	}
	var res Reservation
	at := int64(-1) // the clock time of the store's refusal, read once; -1: not read
	switch g.Verdict {
	case backend.Unlimited:
		l.admitted(ctx, 0)
		return nil
	case backend.Reserved:
		res = Reservation{l: l, prev: g.Prev, next: g.Next, at: g.At,
			gen: g.Epoch, delay: g.Wait, ok: true, remote: true}
	case backend.Local:
		var wait int64
		if res, wait, _ = l.local(r, n, limit); !res.ok {
			g = backend.Grant{Verdict: backend.Refused, Wait: time.Duration(wait)}
		}
	default:
		at = l.now()
		l.refused(at, int64(g.Wait))
	}
	if !res.ok {
		return l.refuseGrant(ctx, at, g.Wait, afterDeadline(int64(g.Wait), limit, byDeadline, r.maxWait))
	}
	if res.delay == 0 {
		l.admitted(ctx, 0)
		return nil
	}
	l.publishWaited(ctx, l.eventTime(), int64(res.delay))
	l.waiting.Add(1) // counted as an in-process limiter's, and as its scheduled async calls
	err = l.clk.Sleep(ctx, res.delay)
	l.waiting.Add(-1)
	if err != nil {
		res.Cancel()
		return l.rejectContext(ctx, l.eventTime(), 0, err)
	}
	l.admitted(ctx, int64(res.delay))
	return nil
}

// refuseGrant publishes and records the refusal of the call with ctx whose store (or local
// fallback) refused with the retry-after wait, at the clock time at (-1: not read yet), and
// returns its error: the limiter's rejection, also matching context.DeadlineExceeded when
// the permit comes after the call's deadline (deadline, from afterDeadline).
func (l *Limiter) refuseGrant(ctx context.Context, at int64, wait time.Duration, deadline bool) error {
	if at < 0 {
		at = l.eventTime()
	}
	if deadline {
		return l.rejectContext(ctx, at, int64(wait), context.DeadlineExceeded)
	}
	l.reject(ctx, at, int64(wait), l.rej.Plain)
	return l.rej.Plain
}

// reserve asks the store with context.Background(), whatever ctx is: ctx, the call's,
// goes with the events and the recorded refusal. A permit that would come after ctx's
// deadline is refused unreserved (RL-8), with the limiter's rejection that also matches
// context.DeadlineExceeded, as acquire's.
func (backed) reserve(ctx context.Context, l *Limiter, r *rate, n int) (Reservation, error) {
	limit, byDeadline := waitLimit(ctx, r.maxWait)
	g, _ := l.reserveBackend(context.Background(), r, n, time.Duration(limit))
	var res Reservation
	at := int64(-1) // the clock time of the store's refusal, read once; -1: not read
	switch g.Verdict {
	case backend.Unlimited:
		return Reservation{ok: true}, nil
	case backend.Local:
		var wait int64
		var ok bool
		if res, wait, ok = l.local(r, n, limit); !ok {
			g = backend.Grant{Verdict: backend.Refused, Wait: time.Duration(wait)}
		}
	case backend.Reserved:
		res = Reservation{l: l, prev: g.Prev, next: g.Next, at: g.At,
			gen: g.Epoch, delay: g.Wait, ok: true, remote: true}
	default:
		at = l.now()
		l.refused(at, int64(g.Wait))
	}
	if !res.ok {
		return Reservation{delay: g.Wait}, l.refuseGrant(ctx, at, g.Wait, afterDeadline(int64(g.Wait), limit, byDeadline, r.maxWait))
	}
	if res.delay > 0 {
		l.publishWaited(ctx, l.eventTime(), int64(res.delay))
	}
	return res, nil
}

// cancelBackend gives back permits reserved in the backend; the store checks, on its own
// clock and atomically, that their time has not come (SPEC RL-9).
func (r Reservation) cancelBackend() {
	r.l.store.Cancel(context.Background(), r.grant())
}

func (backed) available(l *Limiter, r *rate) int {
	if n, ok := l.store.Available(context.Background(), r.cfg.Permits, r.cfg.Period); ok {
		return n
	}
	r = r.localShare(l.share)
	return l.slots.available(l.now(), r.interval, r.tau, r.cfg.Permits)
}

// eventTime reads the limiter's clock for an event's timestamp; without a listener or a
// recorder there is no event and no read.
func (l *Limiter) eventTime() int64 {
	if !l.events.Observed() {
		return 0
	}
	return l.now()
}
