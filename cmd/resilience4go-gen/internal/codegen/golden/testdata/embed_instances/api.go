// Package embedinstances embeds an interface through an alias and a generic interface
// through an instance: their methods keep their directives.
package embedinstances

import "context"

// Base retries Get.
type Base interface {
	//resilience:retry maxAttempts=5
	Get(ctx context.Context) (string, error)
}

// BaseAlias is Base.
type BaseAlias = Base

// Getter is generic; it is not wrapped itself.
type Getter[T any] interface {
	//resilience:retry maxAttempts=4
	Fetch(ctx context.Context) (T, error)
}

// Outer embeds both.
//
//resilience:timeout duration=1s
type Outer interface {
	BaseAlias
	Getter[int]
}
