// Package backend is the contract between a rate limiter and a store that keeps its state
// outside the process, for the authors of such stores. A limiter built with
// ratelimit.WithBackend (or a keyed limiter, for each of its keys) asks its Store for each
// permit instead of its in-process schedule, so that every instance of a service that uses
// the same limiter name shares one quota. Package ratelimit/redis implements it on Redis;
// users only pass a Backend to ratelimit.WithBackend or resilience.WithRateLimiterBackend.
//
// The semantics are an in-process limiter's (GCRA with a burst of Permits and one permit
// every T = Period/Permits, rounded up to a whole nanosecond; waiting within MaxWait;
// cancellation; the retry-after; available permits), with the store's clock in place of
// the limiter's. The limiter's clock still times its callers' waits and stamps its events.
package backend

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
)

// A Backend keeps limiters' state outside the process. Implementations must be safe for
// concurrent use.
type Backend interface {
	// Bind returns the store of one limiter. It is called once, when the limiter is built
	// (ratelimit.New, or a registry wrapping a function): an error fails the build and is
	// returned as is, and so does a nil Store, with R4C-REG-010. A keyed limiter binds each
	// key when it first sees it, with the id "<id>:<key>"; an error then leaves that key's
	// state in-process, after an EventFailed event. Bind should not contact the backend: a
	// backend that is down must not stop a service from starting.
	Bind(b Binding) (Store, error)
	// LocalShare is how many instances of a service share each quota while the stores
	// answer Local: each limiter then takes 1/LocalShare of its quota in-process instead of
	// all of it, so that the instances, each limiting itself, together stay near the shared
	// quota. The limiter lets one permit through every LocalShare·T, with a burst of
	// Permits/LocalShare (rounded down, at least 1); a call for more permits than that burst
	// (at most Permits) passes when the local bucket is full, and the bucket then owes the
	// rest. It is read at each decision in-process (a store's Local verdict, its
	// AvailablePermits, a Reconfigure), never on the backend's own path, so it may change
	// while the limiters run (e.g. with the count of live instances): the next decision
	// in-process takes the new share, and the in-process schedule keeps what it owes as
	// time, read at the new share's rate. It must be cheap and safe for concurrent use; a
	// value below 2 takes the whole quota, which is what a backend without such a policy
	// returns (1).
	LocalShare() int
}

// Binding is what a Backend learns about the limiter it serves.
type Binding struct {
	// ID is the limiter's instance id: its Name, or the id of the wrapped function; for a
	// key of a keyed limiter, "<id>:<key>". Limiters that share an ID share one quota
	// through the backend, and must have the same Permits and Period.
	ID string
	// Keyed is true for a key of a keyed limiter, whose events name it in Key.
	Keyed bool
	// Key is, when Keyed, the key as the limiter's events name it (policy.Event.Key), which
	// may be empty; ID is then the limiter's id + ":" + Key. A store's EventFailed and
	// EventRecovered events carry it, with the limiter's own id as Instance.
	Key string
	// Clock is the limiter's clock, for the store's own timing (e.g. when to try a backend
	// that failed again).
	Clock clock.Clock
	// Listener receives the limiter's events; the store publishes EventFailed,
	// EventRecovered and EventKeyFailed through it. May be nil.
	Listener policy.Listener
}

// Store is one limiter's state in a Backend: GCRA on a TAT (theoretical arrival time) kept
// by the backend. Each method is one decision, taken atomically by the backend. A Store
// applies its own failure policy: when the backend cannot answer, it lets the limiter
// decide in-process (Local), admits the call with nothing reserved, or refuses it, and
// never returns the backend's error to the caller.
//
// A failure of the backend itself (unreachable, too slow) concerns every store of the
// backend; an error about one store's own data (its key holds a value the backend cannot
// use) concerns that store only: it applies the failure policy to its own calls and
// publishes EventKeyFailed, and the backend's other stores are unaffected.
//
// Each method returns within the store's own time bound, or sooner when ctx ends. A nil or
// already done ctx is never sent to the backend. Implementations must be safe for
// concurrent use.
type Store interface {
	// Reserve takes req.N permits if they are free within req.MaxWait, at the rate of
	// req.Permits per req.Period (the limiter's configuration in force for this call,
	// which can change between calls), advancing the TAT by N·T, and returns a Grant:
	// Admitted with the wait, Refused with the retry-after (the time until N permits are
	// free) and nothing reserved; when the backend cannot answer, the store's failure
	// policy: Local, Admitted with nothing reserved, or Refused. With req.Windows, every
	// window is decided with it, all or none (see Request). The limiter never asks for N
	// < 1, N > Permits or N above a window's Permits. The error is non-nil only when ctx is
	// nil or ended before the store decided; it is then ctx's error (policy.ErrNilContext
	// for a nil ctx) and nothing is known to be reserved.
	Reserve(ctx context.Context, req Request) (Grant, error)
	// Cancel gives back the permits of g, an Admitted grant of this store, as
	// ratelimit.Reservation.Cancel does, when its time g.At has not passed on the
	// backend's clock: when it is the last one reserved (the backend's TAT is g.Next) the
	// TAT moves back to g.Prev; otherwise a store may keep its slot [g.Prev, g.Next) free
	// for the next call that fits (the Redis store does, within a bound), or give nothing
	// back. A grant of a Request with Windows gives back on the windows too (see
	// Request). When the backend cannot answer, or when ctx is nil or done, nothing is
	// restored.
	Cancel(ctx context.Context, g Grant)
	// Available returns how many single permits a call could take now without waiting, at
	// the rate of req.Permits per req.Period and on every window of req.Windows (the
	// limiter's configuration in force): the fewest of them, 0..req.Permits. req.N and
	// req.MaxWait are not used. ok is false when the store has no answer: the backend
	// cannot answer and its failure policy is Local, or ctx is nil or done. The limiter
	// then reports its in-process state.
	Available(ctx context.Context, req Request) (n int, ok bool)
}

// Window is one further quota of a limiter (ratelimit.Windows): Permits per Period, with
// T = Period/Permits rounded up to a whole nanosecond, as the limiter's own. Valid:
// Permits ≥ 1, Period ≥ Permits ns.
type Window struct {
	Permits int
	Period  time.Duration
}

// Request is one Store.Reserve: N permits within MaxWait, at the rate of Permits per
// Period, and on each of the further Windows.
//
// With Windows, the store keeps one GCRA schedule (TAT) for each window besides the one
// of Permits per Period, and decides them together, atomically: the call waits the
// longest of their waits, max(TAT, now) - now - (Permits-N)·T of each; it is refused,
// taking nothing from any, when that is more than MaxWait, with that longest wait as the
// retry-after; else every schedule's TAT moves to max(TAT, now + wait) + N·T. The
// Grant's Prev, Next and At are those of the Permits-per-Period schedule. Its Cancel
// gives back each window's slot when the window's TAT is still the grant's end there
// (no later grant stands behind it), as long as the grant is one of the store's latest
// (the Redis store keeps the windows' slots of its 4 latest grants, as an in-process
// limiter does, and gives nothing back on the windows for an older one); the
// Permits-per-Period slot is given back as for a grant without windows. A window the
// store has no state for has its whole burst free; a store keys each window's state by
// its Permits and Period, so that a change of Windows keeps the state of the windows it
// keeps and starts new ones full.
type Request struct {
	// N is how many permits the call takes, 1..Permits.
	N int
	// MaxWait is how long the call may wait for them; 0 means they must be free now.
	MaxWait time.Duration
	// Permits and Period are the limiter's configuration in force for this call: they give
	// T and the burst. They are valid (Permits ≥ 1, Period ≥ Permits ns); a reconfigured
	// limiter sends its new ones from its next call.
	Permits int
	Period  time.Duration
	// Windows are the limiter's further quotas, at most 3; nil for none. The slice is
	// the limiter's configuration in force, never modified and the same for every call at
	// one configuration, so a store may cache what it derives from it by its address;
	// a store must not modify it. Each window's Permits is at least N.
	Windows []Window
	// Now is the limiter's clock (Binding.Clock) read just before the call, for a store
	// that decides in-process and would read it again; 0 when the limiter did not read it.
	Now time.Duration
}

// Verdict is a Store's decision on one Reserve.
type Verdict uint8

// The verdicts of Store.Reserve.
const (
	// Admitted: the call may go once Grant.Wait has passed. The permits are reserved in
	// the backend, and Prev, Next and At say where; all three are 0 when nothing was
	// reserved (the backend cannot answer and its policy is to let calls pass), and there
	// is then nothing to cancel.
	Admitted Verdict = iota + 1
	// Refused: no permits within MaxWait, or the backend cannot answer and its policy is
	// to refuse; Grant.Wait is the retry-after. Nothing was reserved.
	Refused
	// Local: the backend cannot answer; the limiter decides with its own in-process state,
	// as a limiter without a backend would (each instance then limits itself, at its
	// LocalShare).
	Local
)

// Grant is a Store's answer to Reserve. A Verdict other than the three above is taken as
// Refused.
//
// Prev, Next and At identify an Admitted grant to Store.Cancel, in the store's own time
// base (for Redis, nanoseconds since the Unix epoch on the server's clock): the start
// (Prev) and the end (Next) of its slot of the schedule, and the instant its permits are
// free (At). For a reservation appended at the TAT, Prev and Next are the TAT before and
// after it; for one that took a slot freed by a canceled reservation, Next is before the
// TAT. Epoch is the store's count of conversions of the schedule to a changed rate when
// the permits were granted (0 for a store that does not convert): the store gives nothing
// back for a grant whose Epoch is no longer the schedule's, as an in-process limiter gives
// nothing back across a change of rate. A Grant is a plain value: keeping it allocates
// nothing.
type Grant struct {
	Verdict Verdict
	// Wait is how long until the permits are free (Admitted; 0 = now), or the retry-after
	// (Refused). Never negative: the limiter takes a negative Wait as 0.
	Wait                  time.Duration
	Prev, Next, At, Epoch int64
	// Free and Full tell, for a grant of a Request with Windows, the state of every pair
	// after it, at the store's decision: Free the fewest single permits free over the
	// pairs (Permits per Period and each window; Admitted only), Full how long until
	// every pair's burst is free again (positive when told). A store that does not tell
	// them leaves both 0: the limiter then reports Permits per Period alone (from Next
	// and At, or from Wait).
	Free int
	Full time.Duration
}
