// Package unknownattribute misspells an attribute.
package unknownattribute

import "context"

// API is guarded.
type API interface {
	//resilience:ratelimiter permit=10 period=1s
	Get(ctx context.Context, id string) (string, error)
}
