// Package nodirectives has no directive.
package nodirectives

import "context"

// API is not guarded.
type API interface {
	Get(ctx context.Context, id string) (string, error)
}
