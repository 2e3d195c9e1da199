package async

// Promise completes the future made with it by NewClaimablePromise. It is machinery for
// policy authors: a completer that has work to do before completing a future it hands
// out (publish an event, record an outcome, run a fallback function) claims the future
// first, so that the work is done only for the completion that counts. Once Claim has
// won, Cancel does nothing and reports false, and every other completion is ignored; a
// Cancel that began first makes Claim report false, and the completer leaves the future
// to it.
//
// A Promise is a small value: copying it copies a reference to the same future, and
// neither it nor its methods allocate. The zero Promise has no future: Claim and
// Complete do nothing and report false. Its methods are safe for concurrent use.
type Promise[T any] struct{ f *Future[T] }

// NewClaimablePromise is NewCancelablePromise with a Promise instead of a completion
// function: Cancel calls onCancel (nil: none) once, after completing the future with
// ErrCanceled, unless Claim has claimed the future first. It allocates the future only.
func NewClaimablePromise[T any](onCancel func() (notStarted bool)) (*Future[T], Promise[T]) {
	f := &Future[T]{}
	var s stopper
	if onCancel != nil {
		s = cancelHook(onCancel)
	}
	f.init(s)
	return f, Promise[T]{f}
}

// Claim begins the completion of the future, and reports whether it won it: true if the
// future was pending and no completion had begun (neither Cancel, nor Complete, nor
// another Claim). After it has won, Cancel reports false and does nothing, and the next
// Complete completes the future: the claimer must call Complete, once, or the future
// stays pending for ever. Call Claim and that Complete from the same completer.
func (p Promise[T]) Claim() bool {
	f := p.f
	if f == nil || !f.claim() {
		return false
	}
	f.state.Or(stOwned)
	return true
}

// Complete completes the future with v and err, and reports whether it did: it does when
// no completion has begun, and once Claim has won the future (the first Complete after
// it); it does nothing once the future is complete, or once Cancel, another Complete or a
// Claim has begun completing it without this Complete.
func (p Promise[T]) Complete(v T, err error) bool {
	f := p.f
	if f == nil {
		return false
	}
	if !f.claim() && f.state.And(^stOwned)&stOwned == 0 {
		return false
	}
	f.finish(v, err)
	return true
}
