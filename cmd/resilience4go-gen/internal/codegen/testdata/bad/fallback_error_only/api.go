// Package fallbackerroronly has a value fallback for a method that returns an error only.
package fallbackerroronly

import "context"

// API is guarded.
type API interface {
	//resilience:fallback method=pingFallback
	Ping(ctx context.Context) error
}

func pingFallback(context.Context, error) (int, error) { return 0, nil }
