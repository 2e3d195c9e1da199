// Package promise is how a policy completes a future it hands out when it has work to do
// before completing it (publish an event, record an outcome, run a fallback function):
// it claims the future first, so that the work is done only for the completion that
// counts.
package promise

import (
	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/future"
)

// Promise completes the future made with it by New. Once Claim has won, Cancel does
// nothing and reports false, and every other completion is ignored; a Cancel that began
// first makes Claim report false, and the completer leaves the future to it.
//
// A Promise is a small value: copying it copies a reference to the same future, and
// neither it nor its methods allocate. The zero Promise has no future: Claim and Complete
// do nothing and report false. Its methods are safe for concurrent use.
type Promise[T any] struct{ f *future.Future[T] }

// New is async.NewCancelablePromise with a Promise instead of a completion function:
// Cancel calls onCancel (nil: none) once, after completing the future with
// async.ErrCanceled, unless Claim has claimed the future first. It allocates the future
// only.
func New[T any](onCancel func() (notStarted bool)) (*async.Future[T], Promise[T]) {
	f := future.New[T](onCancel)
	return (*async.Future[T])(f), Promise[T]{f}
}

// Init is New for a future that the completer holds in its own state, so that the future
// costs no allocation of its own: it makes f pending, with s (nil: none) to stop its work
// on Cancel, as New's onCancel does. It is called once, before f is shared; f must not
// be copied afterwards.
func Init[T any](f *future.Future[T], s future.Stopper) (*async.Future[T], Promise[T]) {
	f.Init(s)
	return (*async.Future[T])(f), Promise[T]{f}
}

// Claim begins the completion of the future, and reports whether it won it: true if the
// future was pending and no completion had begun (neither Cancel, nor Complete, nor
// another Claim). After it has won, Cancel reports false and does nothing, and the next
// Complete completes the future: the claimer must call Complete, once, or the future
// stays pending for ever. Call Claim and that Complete from the same completer.
func (p Promise[T]) Claim() bool { return p.f.ClaimOwned() }

// Begun reports whether the future's completion has begun: Cancel, Complete or a Claim.
// A completer that starts work on the future's behalf checks it first, so that no work
// starts once Cancel has completed the future and before its hook has run. The zero
// Promise reports false.
func (p Promise[T]) Begun() bool { return p.f != nil && p.f.Claimed() }

// Complete completes the future with v and err, and reports whether it did: it does when
// no completion has begun, and once Claim has won the future (the first Complete after
// it); it does nothing once the future is complete, or once Cancel, another Complete or a
// Claim has begun completing it without this Complete.
func (p Promise[T]) Complete(v T, err error) bool { return p.f.CompleteOwned(v, err) }
