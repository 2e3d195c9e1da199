// Package chosenorder names an order: the methods' docs list the layers in it.
package chosenorder

import "context"

// API has a timeout around its retry.
type API interface {
	// Get's timeout is outside its retry.
	//
	//resilience:retry maxAttempts=2
	//resilience:timeout duration=1s
	//resilience:order layers=timeout,retry
	Get(ctx context.Context, id string) (string, error)
	// Put has an order and no policy.
	//
	//resilience:order layers=timeout,retry
	Put(ctx context.Context, id string) error
}
