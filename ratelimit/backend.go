package ratelimit

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/sat"
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
	// ID is the limiter's instance id: its Name, or the id of the wrapped function; for a
	// key of a Keyed limiter, "<id>:<key>". Limiters that share an ID share one quota
	// through the backend.
	ID string
	// Keyed is true for a key of a Keyed limiter, whose events name it in Key.
	Keyed bool
	// Key is, when Keyed, the key as the limiter's events name it (Event.Key), which may be
	// empty; ID is then the limiter's id + ":" + Key. A store's EventBackendFailed
	// and EventBackendRecovered events carry it, with the limiter's own id as
	// Instance.
	Key string
	// Config is the limiter's resolved, validated configuration. Every limiter that shares
	// an ID through a backend must have the same Permits and Period.
	Config Config
	// Clock is the limiter's clock, for the store's own timing (e.g. when to try a backend
	// that failed again).
	Clock clock.Clock
	// Listener receives the limiter's events; the store publishes EventBackendFailed,
	// EventBackendRecovered and EventBackendKeyFailed through it. May be nil.
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
// publishes EventBackendKeyFailed, and the backend's other stores are unaffected.
//
// Each method returns within the store's own time bound, or sooner when ctx ends. A nil
// or already done ctx is never sent to the backend. Implementations must be safe for
// concurrent use.
type Store interface {
	// Reserve takes req.N permits if they are free within req.MaxWait, at the rate of
	// req.Config (the limiter's configuration in force for this call, which can change
	// between calls), advancing the TAT by N·T, and returns a Grant: Reserved with the wait,
	// Refused with the retry-after (the time until N permits are free) and nothing
	// reserved, Local or Unlimited when the backend cannot answer. The limiter never asks
	// for N < 1 or N > Permits. The error is non-nil only when ctx is nil or ended before
	// the store decided; it is then policy.ErrNilContext for a nil ctx, ctx.Err()
	// otherwise, and nothing is known to be reserved.
	Reserve(ctx context.Context, req Request) (Grant, error)
	// Cancel gives back the permits of a Reserved grant whose Token is t, as
	// Reservation.Cancel does, when its time t.At has not passed on the backend's clock:
	// when it is the last one reserved (the backend's TAT is t.Next) the TAT moves back to
	// t.Prev; otherwise a store may keep its slot [t.Prev, t.Next) free for the next call
	// that fits (the Redis store does, within a bound), or give nothing back. When the
	// backend cannot answer, or when ctx is nil or done, nothing is restored.
	Cancel(ctx context.Context, t Token)
	// Available returns how many calls would pass now without waiting, 0..c.Permits, at
	// the rate of c, the limiter's configuration in force. ok is
	// false when the store has no answer: the backend cannot answer and its failure
	// policy is Local, or ctx is nil or done. The limiter then reports its in-process
	// state.
	Available(ctx context.Context, c Config) (n int, ok bool)
}

// Request is one Store.Reserve: N permits within MaxWait, at the rate of Config.
type Request struct {
	// N is how many permits the call takes, 1..Config.Permits.
	N int
	// MaxWait is how long the call may wait for them; 0 means they must be free now.
	MaxWait time.Duration
	// Config is the limiter's configuration in force for this call: its Permits and
	// Period give T and the burst. It is valid; a reconfigured limiter sends its new one
	// from the next call.
	Config Config
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
// Redis, nanoseconds since the Unix epoch on the server's clock): the start (Prev) and the
// end (Next) of its slot of the schedule, and the instant its permit is free (At). For a
// reservation appended at the TAT, they are the TAT before and after it; for one that took
// a slot freed by a canceled reservation, Next is before the TAT. Epoch is the store's
// count of conversions of the schedule to a changed rate when the permit was granted (0
// for a store that does not convert): the store gives nothing back for a Token whose
// Epoch is no longer the schedule's, as an in-process limiter gives nothing back across
// a change of rate. A Token is a plain value: keeping it allocates nothing.
type Token struct {
	Prev, Next, At int64
	Epoch          int64
}

// LocalSharer is implemented by a Backend whose stores, when they answer Local, ask each
// limiter to take a share of its quota in-process instead of all of it: 1/LocalShare() of
// it, so that the instances of a service, each limiting itself while the backend fails,
// together stay near the shared quota. The limiter then lets one permit through every
// LocalShare()·T, with a burst of Permits/LocalShare() (rounded down, at least 1); a call
// for more permits than that burst (at most Permits) passes when the local bucket is
// full, and the bucket then owes the rest: the next permit comes that much later. LocalShare is
// read once, when the limiter is built; a value below 2 takes the whole quota.
type LocalSharer interface {
	LocalShare() int
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
func (l *Limiter) bind(b Backend, c Config) error {
	if b == nil {
		return nil
	}
	st, err := b.Bind(Binding{ID: l.events.ID, Config: c, Clock: l.clk, Listener: l.relay})
	if err != nil {
		return err
	}
	if st == nil {
		return r4c.Errorf(r4c.BadSpec, "rateLimiter.backend", "", "the backend's Bind returned no Store")
	}
	l.backend, l.store, l.share = b, st, localShare(b)
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

// localShare returns the share of b's stores' Local outcome: LocalShare() when b is a
// LocalSharer, else 1.
func localShare(b Backend) int {
	if s, ok := b.(LocalSharer); ok {
		return max(s.LocalShare(), 1)
	}
	return 1
}

// reserveBackend asks l's store for n permits within maxWait at the rate r, with a
// Grant's Wait never negative.
func (l *Limiter) reserveBackend(ctx context.Context, r *rate, n int, maxWait time.Duration) (Grant, error) {
	g, err := l.store.Reserve(ctx, Request{N: n, MaxWait: maxWait, Config: r.cfg})
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
	switch g.Outcome {
	case Reserved, Unlimited:
		l.admitted(ctx, 0)
		return nil
	case Local:
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
	if err := decorate.ContextErr(ctx); err != nil {
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
	switch g.Outcome {
	case Unlimited:
		l.admitted(ctx, 0)
		return nil
	case Reserved:
		res = Reservation{l: l, prev: g.Token.Prev, next: g.Token.Next, at: g.Token.At,
			gen: g.Token.Epoch, delay: g.Wait, ok: true, remote: true}
	case Local:
		var wait int64
		if res, wait, _ = l.local(r, n, limit); !res.ok {
			g = Grant{Outcome: Refused, Wait: time.Duration(wait)}
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
	switch g.Outcome {
	case Unlimited:
		return Reservation{ok: true}, nil
	case Local:
		var wait int64
		var ok bool
		if res, wait, ok = l.local(r, n, limit); !ok {
			g = Grant{Outcome: Refused, Wait: time.Duration(wait)}
		}
	case Reserved:
		res = Reservation{l: l, prev: g.Token.Prev, next: g.Token.Next, at: g.Token.At,
			gen: g.Token.Epoch, delay: g.Wait, ok: true, remote: true}
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
	r.l.store.Cancel(context.Background(), Token{Prev: r.prev, Next: r.next, At: r.at, Epoch: r.gen})
}

func (backed) available(l *Limiter, r *rate) int {
	if n, ok := l.store.Available(context.Background(), r.cfg); ok {
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
