// Package emptyvalue has an attribute with an empty value.
package emptyvalue

import "context"

// API is guarded.
type API interface {
	//resilience:bulkhead maxConcurrent= maxWait=10ms
	Get(ctx context.Context, id string) (string, error)
}
