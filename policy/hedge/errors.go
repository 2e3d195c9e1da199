package hedge

import "github.com/resilience4go/resilience4go/async"

// ErrPanicked is the error of a call whose attempt panicked after the caller got the
// call's future (an attempt started after a delay, or after another attempt failed): the
// panic goes on up the goroutine that started that attempt, and the call's future fails
// with ErrPanicked, every other attempt canceled. A panic in the first attempt reaches
// the caller, who gets no future. It is async.ErrPanicked, the error of every future whose
// work panicked when it was started later.
var ErrPanicked = async.ErrPanicked
