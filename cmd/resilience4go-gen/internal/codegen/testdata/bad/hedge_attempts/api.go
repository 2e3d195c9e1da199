// Package hedgeattempts has a hedge of one attempt.
package hedgeattempts

import (
	"context"

	"github.com/resilience4go/resilience4go/async"
)

// API is guarded.
type API interface {
	//resilience:hedge delay=50ms maxAttempts=1
	Get(ctx context.Context, id string) *async.Future[string]
}
