// Package sharedconflict shares one limiter by name, with two different quotas.
package sharedconflict

import "context"

// API shares the limiter "api" between Get and Put.
type API interface {
	//resilience:ratelimiter name=api permits=5 period=1s
	Get(ctx context.Context, id string) (string, error)
	//resilience:ratelimiter name=api permits=10 period=1000ms
	Put(ctx context.Context, id string) error
}
