// Package nameclash has interfaces whose generated names collide: A's constructor is
// NewAResilient, and so is NewA's type.
package nameclash

import "context"

// A is guarded.
type A interface {
	//resilience:timeout duration=1s
	Get(ctx context.Context) (string, error)
}

// NewA is guarded.
type NewA interface {
	//resilience:timeout duration=1s
	Put(ctx context.Context) (string, error)
}
