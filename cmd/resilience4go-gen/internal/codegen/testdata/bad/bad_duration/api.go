// Package badduration has a duration of the wrong syntax.
package badduration

import "context"

// API is guarded.
type API interface {
	//resilience:ratelimiter permits=10 period=1x
	Get(ctx context.Context, id string) (string, error)
}
