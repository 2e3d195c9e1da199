// Package policytwice gives a policy twice on one method.
package policytwice

import "context"

// API is guarded.
type API interface {
	// Get gets.
	//
	//resilience:retry maxAttempts=3
	//resilience:timeout duration=1s
	//resilience:retry delay=100ms
	Get(ctx context.Context, id string) (string, error)
}
