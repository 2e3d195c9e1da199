// Package hedgewithretry hedges and retries one method.
package hedgewithretry

import (
	"context"

	"github.com/resilience4go/resilience4go/async"
)

// API is guarded.
type API interface {
	// Get is hedged and retried.
	//
	//resilience:hedge delay=50ms maxAttempts=2
	//resilience:retry maxAttempts=3
	Get(ctx context.Context, id string) *async.Future[string]
}
