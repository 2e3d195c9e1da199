// Package nonemisused puts //resilience:none where it cannot go.
package nonemisused

import "context"

// API has none on the interface, and none beside another directive.
//
//resilience:none
type API interface {
	//resilience:none
	//resilience:retry
	Get(ctx context.Context, id string) (string, error)
}
