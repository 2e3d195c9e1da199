package hedge

import "errors"

// ErrPanicked is the error of a call whose attempt panicked after the caller got the
// call's future (an attempt started after a delay, or after another attempt failed): the
// panic goes on up the goroutine that started that attempt, and the call's future fails
// with ErrPanicked, every other attempt canceled. A panic in the first attempt reaches
// the caller, who gets no future.
var ErrPanicked = errors.New("hedge: an attempt panicked")
