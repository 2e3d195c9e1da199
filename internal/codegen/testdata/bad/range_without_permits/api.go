// Package rangewithoutpermits has values out of range beside a permits that a
// configuration gives, and two values out of range in one directive.
package rangewithoutpermits

import "context"

// API is guarded.
type API interface {
	//resilience:ratelimiter config=limits period=0
	Get(ctx context.Context, id string) (string, error)

	//resilience:ratelimiter config=limits maxWait=-1s
	Put(ctx context.Context, id string) error

	//resilience:retry maxAttempts=0 delay=-1s
	Del(ctx context.Context, id string) error
}
