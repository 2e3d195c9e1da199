// Package periodtooshort has a period shorter than a nanosecond per permit.
package periodtooshort

import "context"

// API is guarded.
type API interface {
	//resilience:ratelimiter permits=10 period=5ns
	Get(ctx context.Context, id string) (string, error)
}
