// Package bigint has a count that int cannot hold on 32-bit platforms.
package bigint

import "context"

// API is guarded.
type API interface {
	//resilience:bulkhead maxConcurrent=3000000000
	Get(ctx context.Context) error
}
