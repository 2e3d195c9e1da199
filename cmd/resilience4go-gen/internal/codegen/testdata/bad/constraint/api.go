// Package constraint has a constraint interface.
package constraint

import "context"

// Getter is a constraint: no value has it.
type Getter interface {
	~int | ~int64

	//resilience:timeout duration=1s
	Get(ctx context.Context, id string) (string, error)
}
