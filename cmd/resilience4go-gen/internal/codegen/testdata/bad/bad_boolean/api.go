// Package badboolean has a boolean of the wrong syntax.
package badboolean

import "context"

// API is guarded.
type API interface {
	//resilience:retry maxAttempts=3 waitForPermit=yes
	Get(ctx context.Context, id string) (string, error)
}
