// Package orderunknownlayer orders a layer that does not exist.
package orderunknownlayer

import "context"

// API is guarded.
type API interface {
	//resilience:timeout duration=1s
	//resilience:retry maxAttempts=3
	//resilience:order layers=timeout,retri
	Get(ctx context.Context, id string) (string, error)
}
