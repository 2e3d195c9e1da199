// Package errorsnoterror names a variable that is not an error.
package errorsnoterror

import (
	"context"
	"errors"
)

// ErrNotFound is not retried.
var ErrNotFound = errors.New("not found")

// MaxSize is not an error.
var MaxSize = 10

// API is guarded.
type API interface {
	//resilience:retry maxAttempts=3 abortOn=ErrNotFound,MaxSize
	Get(ctx context.Context, id string) (string, error)
}
