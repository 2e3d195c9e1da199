// Package shapenocontext guards a method without a context.
package shapenocontext

import "context"

// API is guarded.
type API interface {
	// Get takes no context.
	//
	//resilience:timeout duration=1s
	Get(id string) (string, error)

	// Put is fine.
	//
	//resilience:timeout duration=1s
	Put(ctx context.Context, id string) error
}
