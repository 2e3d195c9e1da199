// Package unknowndirective misspells a directive.
package unknowndirective

import "context"

// API is guarded.
type API interface {
	//resilience:ratelimitter permits=10 period=1s
	Get(ctx context.Context, id string) (string, error)
}
