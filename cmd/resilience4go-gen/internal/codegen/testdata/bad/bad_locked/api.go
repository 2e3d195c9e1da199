// Package badlocked has a locked attribute that is not a boolean.
package badlocked

import "context"

// API is guarded.
type API interface {
	//resilience:timeout duration=1s locked=yes
	Get(ctx context.Context, id string) (string, error)
}
