package policy

import "errors"

// ErrNilContext is the error of a call made with a nil context.Context. Every policy
// returns it (wrapped in its rejection, where it has one) instead of panicking, and never
// runs the function.
var ErrNilContext = errors.New("resilience4go: nil context.Context")
