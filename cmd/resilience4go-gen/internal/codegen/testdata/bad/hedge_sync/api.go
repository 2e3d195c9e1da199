// Package hedgesync hedges a method that does not return a future.
package hedgesync

import "context"

// API is guarded.
type API interface {
	//resilience:hedge delay=50ms maxAttempts=2
	Get(ctx context.Context, id string) (string, error)
}
