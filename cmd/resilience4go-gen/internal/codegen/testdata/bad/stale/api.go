// Package stale is regenerated over stale generated files.
package stale

import "context"

// API is guarded.
type API interface {
	//resilience:timeout duration=1s
	Get(ctx context.Context) (string, error)
}
