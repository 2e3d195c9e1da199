// Package negativewait has a negative wait.
package negativewait

import "context"

// API is guarded.
type API interface {
	//resilience:bulkhead maxConcurrent=4 maxWait=-1s
	Get(ctx context.Context, id string) (string, error)
}
