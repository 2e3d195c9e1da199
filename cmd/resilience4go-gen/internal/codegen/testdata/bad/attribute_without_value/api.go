// Package attributewithoutvalue has an attribute without "=".
package attributewithoutvalue

import "context"

// API is guarded.
type API interface {
	//resilience:retry maxAttempts delay=100ms
	Get(ctx context.Context, id string) (string, error)
}
