// Package zeropermits has a rate limiter without permits.
package zeropermits

import "context"

// API is guarded.
type API interface {
	//resilience:ratelimiter permits=0 period=1s
	Get(ctx context.Context, id string) (string, error)
}
