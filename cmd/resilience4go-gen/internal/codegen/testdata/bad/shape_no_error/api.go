// Package shapenoerror guards a method that returns no error.
package shapenoerror

import "context"

// API is guarded.
type API interface {
	//resilience:retry maxAttempts=3
	//resilience:timeout duration=1s
	Get(ctx context.Context, id string) (string, bool)
}
