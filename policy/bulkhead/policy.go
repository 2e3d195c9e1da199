package bulkhead

import (
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/internal/slots"
)

// NewPolicy returns b as a policy of layer Layer, for calls returning T: its Decorate
// guards a function that returns (T, error), its DecorateAsync one that returns a future.
// Below, next is that function and ctx the context of a call.
//
// Its Decorate returns next guarded by b: each call takes a slot (waiting for it on the
// caller's goroutine up to the MaxWait in force when it arrives, by priority and in FIFO
// order within one, honouring
// ctx) and holds it until next returns, or panics. A rejection returns the zero T and b's
// rejection (matching ErrFull, and ctx's error when ctx ended the wait); next is not
// called. A ctx that is nil or already done when the call arrives is rejected at once,
// whatever slots are free and whatever MaxWait is: the rejection matches ErrFull and ctx's error
// (policy.ErrNilContext for a nil ctx), no slot is taken and no event is published.
// Each call's outcome is recorded once, with ctx (see below).
// Admitted calls that find a slot free, and calls rejected at once, allocate nothing (but
// for a nil ctx), with a recorder or without. A disabled bulkhead lets every call through
// to next, but for a nil or done ctx, whose error it returns as is.
//
// Its DecorateAsync returns next guarded by b, for calls that return a future. A call
// holds its slot from its start until its future completes; a future completed by Cancel
// gives the slot back at once, so work that goes on after its future was canceled no
// longer counts against MaxConcurrent.
//   - ctx nil or already done: a failed future with b's rejection, matching
//     ErrFull and ctx's error (policy.ErrNilContext for a nil ctx), whatever slots are
//     free; next never runs, no slot is taken, no event is published.
//   - A slot free now for ctx's priority (and nobody of it or above waiting): next starts
//     at once, and its own future is returned (a nil future from next: a future failed with async.ErrNilFuture, and the
//     slot comes back at once).
//   - No slot and MaxWait 0: a failed future with b's rejection, matching
//     ErrFull, made once when next is decorated.
//   - Otherwise the call queues, by priority and FIFO within one, as a callback: no
//     goroutine waits. When a slot is handed to it, next starts on the goroutine that released the slot (or that raised
//     MaxConcurrent in a reload); when a queued call's next panics there, the slot
//     it gives back goes to the next waiters before the panic goes on up that goroutine
//     (should one of them panic too, its panic goes on in place of the first). After
//     MaxWait, the one in force when it arrived (a clock timer) the future fails with b's
//     rejection and the call leaves the queue. Cancelling the future, or ctx ending,
//     while it waits removes it from the queue at once: Cancel returns true and next
//     never runs; ctx ending fails the future with a rejection matching ctx's error. Once
//     started, cancelling the future cancels next's future (Cancel returns false).
//
// Each call's outcome is recorded once, with ctx, when the bulkhead decides: at once, or
// when a queued call starts (ResultAdmitted, Wait = how long it waited), expires or is
// ended by ctx (ResultRejected); a call whose future is canceled while it waits records
// nothing. A disabled bulkhead lets every call through to next, but for a nil or done
// ctx, whose error it returns as is.
//
// With a recorder (a registry's observer, resilience.WithObserver), each admission
// decision is recorded once, with the call's context: observe.ResultAdmitted with Wait =
// how long the call waited for its slot (0 when it did not wait), or
// observe.ResultRejected with Err = the rejection, also for a call refused on arrival for
// its nil or done context (recorded with context.Background() for a nil one). An
// asynchronous call whose future is canceled while it waits was neither let in nor
// refused: nothing is recorded for it. A disabled bulkhead records nothing. Without a
// recorder, recording costs a nil check.
func NewPolicy[T any](b *Bulkhead) policy.Policy[T] { return slots.Policy[T](Layer, &b.s) }

// Decorate is the bulkhead's layer as package resilience composes it: it guards next, a
// function of any arity (its arguments carried as A) and result T, synchronous or
// returning a future, as NewPolicy's Decorate and DecorateAsync guard a function without
// argument. Its type argument F is one of this module's own function types, which code
// outside the module cannot name, so it is not for calling directly: guard a function
// with NewPolicy[T](b).Decorate (or DecorateAsync), or wrap it with resilience.Wrap and a
// resilience.Bulkhead spec.
func Decorate[F decorate.Func[A, T] | decorate.AsyncFunc[A, T], A, T any](b *Bulkhead, next F) F {
	return slots.Decorate[F, A, T](&b.s, next)
}
