// Package rateoutofrange has a failure rate above 100%.
package rateoutofrange

import "context"

// API is guarded.
type API interface {
	//resilience:circuitbreaker failureRateThreshold=150 waitInOpen=30s
	Get(ctx context.Context, id string) (string, error)
}
