// Package embedauto has interfaces without directives of their own that embed methods
// with directives: without -type, they are wrapped too.
package embedauto

import "context"

// Base retries Get.
type Base interface {
	//resilience:retry maxAttempts=2
	Get(ctx context.Context) (string, error)
}

// A embeds Base.
type A interface {
	Base
}

// G is generic: not wrapped itself.
type G[T any] interface {
	//resilience:retry maxAttempts=3
	Fetch(ctx context.Context) (T, error)
}

// C embeds an instance of G.
type C interface {
	G[string]
}
