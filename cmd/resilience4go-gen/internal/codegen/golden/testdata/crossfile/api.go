// Package crossfile names a fallback and an error declared in a file for Linux only.
package crossfile

import "context"

// API is guarded.
type API interface {
	//resilience:retry abortOn=ErrGone
	//resilience:fallback method=zero
	Get(ctx context.Context) (int, error)
}
