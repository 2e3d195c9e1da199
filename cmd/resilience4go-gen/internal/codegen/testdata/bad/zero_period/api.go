// Package zeroperiod has a rate limiter with a zero period.
package zeroperiod

import "context"

// API is guarded.
type API interface {
	//resilience:ratelimiter permits=10 period=0
	Get(ctx context.Context, id string) (string, error)
}
