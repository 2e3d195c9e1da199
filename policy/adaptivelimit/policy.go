package adaptivelimit

import (
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/internal/slots"
)

// NewPolicy returns l as a policy of layer Layer, for calls returning T: its Decorate and
// DecorateAsync guard a function with l.
//
// A synchronous call is let in as with Acquire (waiting up to MaxWait by priority, FIFO within one,
// honouring its context) and counts as in flight until the function returns; its outcome
// is then a sample for the algorithm (see below: a nil error or an ordinary error is a
// sample, context.DeadlineExceeded, DropOn or a context past its deadline a drop, a
// cancellation or IgnoreOn none). A function that panics counts out
// without a sample, and the panic goes on. A rejection returns the zero T and l's
// rejection (matching ErrLimitExceeded, and the context's error when the context ended
// the wait); the function is not called. A context that is nil or already done when the
// call arrives is rejected at once, whatever the limit and MaxWait: the rejection matches
// ErrLimitExceeded and the context's error (policy.ErrNilContext for a nil context),
// nothing is counted and no event is published. Each call's outcome is recorded once,
// with its context (see below). Calls let in without waiting, and
// calls rejected at once, allocate nothing, with a recorder or without. A disabled
// limiter lets every call through, but for a nil or done context, whose error it returns
// as is.
//
// A call that returns a future counts as in flight from its start until its future
// completes, and its outcome is then a sample, as above; a future completed by Cancel
// counts out at once, without a sample (unless the context's deadline has passed: an
// outer timeout that cancels the future makes the call a drop).
//   - Context nil or already done: a failed future with l's rejection, matching
//     ErrLimitExceeded and the context's error (policy.ErrNilContext for a nil context),
//     whatever the limit; the function never runs, nothing is counted, no event is
//     published.
//   - The call fits under its priority's share of the limit now (and nobody of its
//     priority or above waits): the function starts at once,
//     and its own future is returned (a nil future from it: a future failed with
//     async.ErrNilFuture, and the call counts out at once, without a sample).
//   - It does not fit and MaxWait is 0: a failed future with l's rejection, made once
//     when the function is decorated.
//   - Otherwise the call queues, by priority and FIFO within one, as a callback: no
//     goroutine waits. When it is let in, the function starts on the goroutine that made room (a completing call, or the
//     one whose sample raised the limit); when a queued call's function panics there, the
//     room it gives back goes to the next waiters before the panic goes on up that
//     goroutine (should one of them panic too, its panic goes on in place of the first).
//     After MaxWait (a clock timer) the future fails with l's rejection and the call
//     leaves the queue. Cancelling the future, or the context ending, while it waits
//     removes it from the queue at once: Cancel returns true and the function never runs;
//     the context ending fails the future with a rejection matching the context's error.
//     Once started, cancelling the future cancels the function's future (Cancel returns
//     false).
//
// Each call's outcome is recorded once, with its context, when the limiter decides: at
// once, or when a queued call starts (ResultAdmitted, Wait = how long it waited), expires
// or is ended by its context (ResultRejected); a call whose future is canceled while it
// waits records nothing. A disabled limiter lets every call through, but for a nil or
// done context, whose error it returns as is.
//
// The samples: each call that completes gives a sample: its latency, from the moment it
// was let in (the wait does not count) to its return or completion, on the limiter's
// clock; the calls in flight once it was let in, itself included; and whether it was a
// drop, a sign of overload. By its outcome:
//   - nil, or an error not named below (a "not found" is an answer too): a sample;
//   - an error matching IgnoreOn: no sample (IgnoreOn wins over what follows);
//   - an error matching context.DeadlineExceeded or DropOn, or any error once the call's
//     context has passed its deadline (an outer timeout that cancels the call's future
//     makes it fail with async.ErrCanceled, but its context reports the deadline): a
//     drop;
//   - async.ErrCanceled or context.Canceled, the caller giving up: no sample;
//   - a panic, or a nil future: no sample.
//
// With AIMD, a call slower than LatencyThreshold is a drop too. A call that leaves no
// sample still counts out. Permit.Record applies the same rules, without a context. How
// the samples move the limit, the algorithm's documentation tells (see AIMD).
//
// With a recorder (a registry's observer, resilience.WithObserver), each admission
// decision is recorded once, with the call's context: observe.ResultAdmitted with Wait =
// how long the call waited to be let in (0 when it did not wait), or
// observe.ResultRejected with Err = the rejection, also for a call refused on arrival for
// its nil or done context (recorded with context.Background() for a nil one). Acquire
// records as the decorated calls do. An asynchronous call whose future is canceled while
// it waits was neither let in nor refused: nothing is recorded for it. A disabled limiter
// records nothing. Without a recorder, recording costs a nil check.
func NewPolicy[T any](l *Limiter) policy.Policy[T] { return slots.Policy[T](Layer, &l.s) }

// Decorate is the adaptive limit's layer as package resilience composes it: it guards
// next, a function of any arity (its arguments carried as A) and result T, synchronous or
// returning a future, as NewPolicy's Decorate and DecorateAsync guard a function without
// argument. Its type argument F is one of this module's own function types, which code
// outside the module cannot name, so it is not for calling directly: guard a function
// with NewPolicy[T](l).Decorate (or DecorateAsync), or wrap it with resilience.Wrap and a
// resilience.AdaptiveLimit spec.
func Decorate[F decorate.Func[A, T] | decorate.AsyncFunc[A, T], A, T any](l *Limiter, next F) F {
	return slots.Decorate[F, A, T](&l.s, next)
}
