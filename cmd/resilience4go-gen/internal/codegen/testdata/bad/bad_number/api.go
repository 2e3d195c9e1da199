// Package badnumber has a number of the wrong syntax.
package badnumber

import "context"

// API is guarded.
type API interface {
	//resilience:ratelimiter permits=ten period=1s
	Get(ctx context.Context, id string) (string, error)
}
