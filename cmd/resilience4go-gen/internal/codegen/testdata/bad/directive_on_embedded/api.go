// Package directiveonembedded has a directive on an embedded interface.
package directiveonembedded

import (
	"context"
	"io"
)

// API is guarded.
type API interface {
	//resilience:timeout duration=1s
	Get(ctx context.Context, id string) (string, error)

	//resilience:retry maxAttempts=3
	io.Closer
}
