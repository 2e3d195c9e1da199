// Package hedgeinterface hedges every method of an interface, one of which is synchronous.
package hedgeinterface

import (
	"context"

	"github.com/resilience4go/resilience4go/async"
)

// API is hedged.
//
//resilience:hedge delay=50ms maxAttempts=2
type API interface {
	// Get returns a future: it can be hedged.
	Get(ctx context.Context, id string) *async.Future[string]
	// Put returns an error: it cannot.
	Put(ctx context.Context, id string) error
	// Name passes through: it takes no context.
	Name() string
}
