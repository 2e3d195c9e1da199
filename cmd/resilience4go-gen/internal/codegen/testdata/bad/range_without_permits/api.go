// Package rangewithoutpermits has values out of range in directives without permits,
// which instance keys may give, two values out of range in one directive, and values that
// a directive with config= leaves to the constructor.
package rangewithoutpermits

import "context"

// API is guarded.
type API interface {
	//resilience:ratelimiter period=0
	Get(ctx context.Context, id string) (string, error)

	//resilience:ratelimiter maxWait=-1s
	Put(ctx context.Context, id string) error

	//resilience:retry maxAttempts=0 delay=-1s
	Del(ctx context.Context, id string) error

	//resilience:adaptivelimit maxLimit=10 smoothing=5
	List(ctx context.Context, id string) error

	//resilience:adaptivelimit config=big initialLimit=300
	Scan(ctx context.Context, id string) error

	//resilience:adaptivelimit initialLimit=2 maxLimit=1
	Count(ctx context.Context, id string) error

	//resilience:ratelimiter permits=2000000000 period=1ns
	Sum(ctx context.Context, id string) error
}
