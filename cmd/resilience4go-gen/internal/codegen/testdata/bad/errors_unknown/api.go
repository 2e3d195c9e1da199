// Package errorsunknown names an error variable that does not exist.
package errorsunknown

import (
	"context"
	"errors"
)

// ErrNotFound is not retried.
var ErrNotFound = errors.New("not found")

// API is guarded.
type API interface {
	//resilience:retry maxAttempts=3 abortOn=ErrNotFund
	Get(ctx context.Context, id string) (string, error)
}
