package mixedconstraints

import "context"

// B is for every platform.
type B interface {
	//resilience:timeout duration=1s
	Put(ctx context.Context) (string, error)
}
