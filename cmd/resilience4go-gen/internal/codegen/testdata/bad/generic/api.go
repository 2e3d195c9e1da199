// Package generic has a generic interface.
package generic

import "context"

// Store is generic.
type Store[T any] interface {
	//resilience:timeout duration=1s
	Get(ctx context.Context, id string) (T, error)
}
