// Package sharedbyid names, on Put, the id of Get's own limiter with another quota; and
// shares a retry between methods whose configurations may make them agree.
package sharedbyid

import "context"

// API is guarded.
type API interface {
	//resilience:ratelimiter permits=10 period=1s
	Get(ctx context.Context, id string) (string, error)
	//resilience:ratelimiter name=API.Get permits=5 period=1s
	Put(ctx context.Context, id string) error
	//resilience:retry name=shared config=a maxAttempts=2
	Del(ctx context.Context, id string) error
	//resilience:retry name=shared config=b maxAttempts=3
	List(ctx context.Context, id string) error
}
