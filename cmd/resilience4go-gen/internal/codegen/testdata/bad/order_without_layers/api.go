// Package orderwithoutlayers has an order without layers=.
package orderwithoutlayers

import "context"

// API is guarded.
type API interface {
	//resilience:timeout duration=1s
	//resilience:order
	Get(ctx context.Context, id string) (string, error)
}
