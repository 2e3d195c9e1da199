package policy

import (
	"context"
	"errors"
)

// ErrNilContext is the error of a call made with a nil context.Context. Every policy
// returns it (wrapped in its rejection, where it has one) instead of panicking, and never
// runs the function.
var ErrNilContext = errors.New("resilience4go: nil context.Context")

// ContextErr is the check every policy makes when a call arrives: ErrNilContext for a nil
// ctx, ctx.Err() otherwise. A call for which it is not nil must not run the function nor
// take anything (a permit, a slot, a half-open trial, an attempt).
func ContextErr(ctx context.Context) error {
	if ctx == nil {
		return ErrNilContext
	}
	return ctx.Err()
}
