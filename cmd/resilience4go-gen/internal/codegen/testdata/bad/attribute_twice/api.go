// Package attributetwice gives an attribute twice.
package attributetwice

import "context"

// API is guarded.
type API interface {
	//resilience:retry maxAttempts=3 delay=100ms maxAttempts=4
	Get(ctx context.Context, id string) (string, error)
}
