// Package stray has directives that apply to nothing.
package stray

import "context"

//resilience:timeout duration=1s
type (
	// A is in a group.
	A interface {
		Get(ctx context.Context) (string, error)
	}
	// B is in the group too.
	B interface {
		Get(ctx context.Context) (string, error) //resilience:retry
		//resilience:bulkhead maxConcurrent=2
	}
)

// S is a struct.
//
//resilience:retry
type S struct{}
