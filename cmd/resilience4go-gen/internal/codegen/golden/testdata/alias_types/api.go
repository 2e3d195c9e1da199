// Package aliastypes writes the context, the future and the error of its methods through
// aliases, as golang.org/x/net/context does: each is the type it aliases.
package aliastypes

import (
	"context"

	"github.com/resilience4go/resilience4go/async"
)

// Ctx is context.Context.
type Ctx = context.Context

// IntFuture is a future of int.
type IntFuture = async.Future[int]

// Err is error.
type Err = error

// API is guarded on every method.
//
//resilience:timeout duration=1s
type API interface {
	// Put takes an aliased context.
	Put(ctx Ctx, id string) Err
	// Count returns an aliased future.
	Count(ctx context.Context) *IntFuture
	// Get has a fallback that takes an aliased context.
	//
	//resilience:fallback method=cached
	Get(ctx Ctx, id string) (string, error)
}

func cached(Ctx, error) (string, error) { return "", nil }
