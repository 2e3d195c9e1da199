// Package several has errors in two files and in two interfaces.
package several

import "context"

// Orders is guarded.
//
//resilience:retry maxAttempts=3 delay=1x
type Orders interface {
	// Put is hedged, but returns no future. It is checked after Get.
	//
	//resilience:hedge delay=50ms
	Put(ctx context.Context, id string) error

	// Get has two errors on one line.
	//
	//resilience:ratelimiter permits=ten period=1x
	Get(ctx context.Context, id string) (string, error)
}
