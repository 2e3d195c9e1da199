package ratelimit

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
)

// A Backend keeps limiters' state outside the process, so that every instance of a service
// shares one quota, where a limiter without one limits only its own process. A Limiter
// built with WithBackend asks its Store for each permit instead of its in-process TAT; the
// semantics are an in-process limiter's (GCRA, waiting within MaxWait, cancellation, the
// retry-after, AvailablePermits), with the store's clock in place of the limiter's (the
// limiter's clock still times Acquire's waits and stamps events). Package ratelimit/redis
// provides a Backend on Redis.
//
// Implementations must be safe for concurrent use.
type Backend interface {
	// Bind returns the store of one limiter. It is called once, when the limiter is built
	// (ratelimit.New, or a registry wrapping a function); an error fails the build and is
	// returned as is, and so does a nil Store, with R4C-REG-010. A Keyed limiter binds
	// each key when it first sees it, with the id "<id>:<key>". Bind should not contact
	// the backend: a backend that is down must not stop a service from starting.
	Bind(b Binding) (Store, error)
}

// Binding is what a Backend learns about the limiter it serves.
type Binding struct {
	// ID is the limiter's instance id: its Name, or the id of the wrapped function.
	// Limiters that share an ID share one quota through the backend.
	ID string
	// Config is the limiter's resolved, validated configuration. Every limiter that shares
	// an ID through a backend must have the same Permits and Period.
	Config Config
	// Clock is the limiter's clock, for the store's own timing (e.g. when to try a backend
	// that failed again).
	Clock clock.Clock
	// Listener receives the limiter's events; the store publishes RateLimiterBackendFailed,
	// RateLimiterBackendRecovered and RateLimiterBackendKeyFailed through it. May be nil.
	Listener policy.Listener
}

// Store is one limiter's state in a Backend: GCRA on a TAT kept by the backend. Each
// method is one decision, taken atomically by the backend. A Store applies its own
// failure policy: when the backend cannot answer, it says so through Outcome (Local,
// Unlimited) or refuses, and never returns the backend's error to the caller.
//
// A failure of the backend itself (unreachable, too slow) concerns every store of the
// backend; an error about one store's own data (its key holds a value the backend cannot
// use) concerns that store only: it applies the failure policy to its own calls and
// publishes RateLimiterBackendKeyFailed, and the backend's other stores are unaffected.
//
// Each method returns within the store's own time bound, or sooner when ctx ends. A nil
// or already done ctx is never sent to the backend. Implementations must be safe for
// concurrent use.
type Store interface {
	// Reserve takes the next permit if it is free within maxWait, advancing the TAT by T,
	// and returns a Grant: Reserved with the wait, Refused with the retry-after (the time
	// until the next permit is free) and nothing reserved, Local or Unlimited when the
	// backend cannot answer. The error is non-nil only when ctx is nil or ended before
	// the store decided; it is then policy.ContextErr(ctx) (policy.ErrNilContext for a
	// nil ctx) and nothing is known to be reserved.
	Reserve(ctx context.Context, maxWait time.Duration) (Grant, error)
	// Cancel gives back the permit of a Reserved grant whose Token is t, as
	// Reservation.Cancel does: only when it is still the last one reserved (the backend's
	// TAT is t.Next) and its time t.At has not passed on the backend's clock; the TAT then
	// moves back to t.Prev. Otherwise, when the backend cannot answer, or when ctx is nil
	// or done, nothing is restored.
	Cancel(ctx context.Context, t Token)
	// Available returns how many calls would pass now without waiting, 0..Permits. ok is
	// false when the store has no answer: the backend cannot answer and its failure
	// policy is Local, or ctx is nil or done. The limiter then reports its in-process
	// state.
	Available(ctx context.Context) (n int, ok bool)
}

// Outcome is a Store's decision on one Reserve.
type Outcome uint8

// The outcomes of Store.Reserve.
const (
	// Reserved: the backend reserved a permit; it is free after Grant.Wait.
	Reserved Outcome = iota + 1
	// Refused: no permit within maxWait, or the backend failed and its policy is to
	// refuse; Grant.Wait is the retry-after. Nothing was reserved.
	Refused
	// Local: the backend cannot answer; the limiter decides with its own in-process state,
	// as a limiter without a backend would (each instance then limits itself).
	Local
	// Unlimited: the backend cannot answer and its policy is to let calls pass; nothing
	// is reserved and there is nothing to cancel.
	Unlimited
)

// Grant is a Store's answer to Reserve. An Outcome other than the four above is taken
// as Refused.
type Grant struct {
	Outcome Outcome
	// Wait is how long until the permit is free (Reserved; 0 = now), or the retry-after
	// (Refused). Never negative: the limiter takes a negative Wait as 0.
	Wait time.Duration
	// Token identifies a Reserved permit to Store.Cancel.
	Token Token
}

// Token identifies a reserved permit to its Store, in the store's own time base (for
// Redis, nanoseconds since the Unix epoch on the server's clock): the TAT before (Prev)
// and after (Next) the reservation, and the instant its permit is free (At). A Token is
// a plain value: keeping it allocates nothing.
type Token struct {
	Prev, Next, At int64
}

// WithBackend keeps the limiter's state in b, shared by every limiter, in any process,
// that has the same instance id (its Name) and the same backend. Default nil: the state
// is in-process, and the limiter limits its own process only. A registry sets a default
// for all its limiters with resilience.WithRateLimiterBackend; WithBackend on a spec wins
// over it.
func WithBackend(b Backend) Option { return func(s *settings) { s.backend = b } }

// Backend returns the limiter's backend, or nil for an in-process limiter.
func (l *Limiter) Backend() Backend { return l.backend }

// bind connects the limiter to its backend's store, if it has one. A Backend that
// returns neither a Store nor an error fails the build with R4C-REG-010.
func (l *Limiter) bind(b Backend) error {
	if b == nil {
		return nil
	}
	st, err := b.Bind(Binding{ID: l.events.ID, Config: l.cfg, Clock: l.clk, Listener: l.events.Listener})
	if err != nil {
		return err
	}
	if st == nil {
		return policy.Errorf(policy.CodeBadSpec, "rateLimiter.backend", "", "the backend's Bind returned no Store")
	}
	l.backend, l.store = b, st
	return nil
}

// reserveBackend asks l's store for a permit within maxWait, with a Grant's Wait never
// negative.
func (l *Limiter) reserveBackend(ctx context.Context, maxWait time.Duration) (Grant, error) {
	g, err := l.store.Reserve(ctx, maxWait)
	g.Wait = max(g.Wait, 0)
	return g, err
}

// backed is the mode of a limiter with a backend: TryAcquire, Acquire, Reserve and
// AvailablePermits ask l.store. The backend's clock decides permits; the limiter's clock
// is read only to stamp events and to decide in-process when the store answers Local.
type backed struct{}

func (backed) tryAcquire(l *Limiter) bool {
	g, _ := l.reserveBackend(context.Background(), 0) // Background never ends: no error
	switch g.Outcome {
	case Reserved, Unlimited:
		return true
	case Local:
		now := l.now()
		if _, _, wait, ok := l.reserve(now, 0); !ok {
			l.publishRejected(now, wait, l.rej.Plain)
			return false
		}
		return true
	}
	l.publishRejected(l.eventTime(), int64(g.Wait), l.rej.Plain)
	return false
}

func (backed) acquire(l *Limiter, ctx context.Context) error {
	if err := policy.ContextErr(ctx); err != nil {
		// A call that arrives with a nil or done context asks the store nothing and
		// publishes nothing.
		return l.rej.ForContext(err)
	}
	limit, byDeadline := l.maxWait, false
	if l.maxWait > 0 {
		if deadline, has := ctx.Deadline(); has {
			// A permit that comes after the deadline is useless: refuse it unreserved (RL-8).
			if left := max(int64(time.Until(deadline)), 0); left < limit {
				limit, byDeadline = left, true
			}
		}
	}
	g, err := l.reserveBackend(ctx, time.Duration(limit))
	if err != nil {
		return l.rejectContext(l.eventTime(), 0, err)
	}
	var r Reservation
	switch g.Outcome {
	case Unlimited:
		return nil
	case Reserved:
		r = Reservation{l: l, prev: g.Token.Prev, next: g.Token.Next, at: g.Token.At,
			delay: g.Wait, ok: true, remote: true}
	case Local:
		now := l.now()
		prev, next, wait, ok := l.reserve(now, limit)
		if !ok {
			g = Grant{Outcome: Refused, Wait: time.Duration(wait)}
			break
		}
		r = Reservation{l: l, prev: prev, next: next, at: satAdd(now, wait), delay: time.Duration(wait), ok: true}
	}
	if !r.ok {
		if byDeadline && int64(g.Wait) <= l.maxWait {
			return l.rejectContext(l.eventTime(), int64(g.Wait), context.DeadlineExceeded)
		}
		l.publishRejected(l.eventTime(), int64(g.Wait), l.rej.Plain)
		return l.rej.Plain
	}
	if r.delay == 0 {
		return nil
	}
	l.publishWaited(l.eventTime(), int64(r.delay))
	if err := l.clk.Sleep(ctx, r.delay); err != nil {
		r.Cancel()
		return l.rejectContext(l.eventTime(), 0, err)
	}
	return nil
}

func (backed) reserve(l *Limiter) (Reservation, error) {
	g, _ := l.reserveBackend(context.Background(), time.Duration(l.maxWait))
	switch g.Outcome {
	case Unlimited:
		return Reservation{ok: true}, nil
	case Local:
		now := l.now()
		prev, next, wait, ok := l.reserve(now, l.maxWait)
		if !ok {
			l.publishRejected(now, wait, l.rej.Plain)
			return Reservation{delay: time.Duration(wait)}, l.rej.Plain
		}
		if wait > 0 {
			l.publishWaited(now, wait)
		}
		return Reservation{l: l, prev: prev, next: next, at: satAdd(now, wait), delay: time.Duration(wait), ok: true}, nil
	case Reserved:
		if g.Wait > 0 {
			l.publishWaited(l.eventTime(), int64(g.Wait))
		}
		return Reservation{l: l, prev: g.Token.Prev, next: g.Token.Next, at: g.Token.At,
			delay: g.Wait, ok: true, remote: true}, nil
	}
	l.publishRejected(l.eventTime(), int64(g.Wait), l.rej.Plain)
	return Reservation{delay: g.Wait}, l.rej.Plain
}

// cancelBackend gives back a permit reserved in the backend; the store checks, on its own
// clock and atomically, that it is still the tail and not yet due (SPEC RL-9).
func (r Reservation) cancelBackend() {
	r.l.store.Cancel(context.Background(), Token{Prev: r.prev, Next: r.next, At: r.at})
}

func (backed) available(l *Limiter) int {
	if n, ok := l.store.Available(context.Background()); ok {
		return n
	}
	return l.available(l.now())
}

// eventTime reads the limiter's clock for an event's timestamp; without a listener there
// is no event and no read.
func (l *Limiter) eventTime() int64 {
	if !l.events.Observed() {
		return 0
	}
	return l.now()
}
