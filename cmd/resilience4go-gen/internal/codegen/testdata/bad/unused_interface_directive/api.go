// Package unusedinterfacedirective has interface directives that no method takes.
package unusedinterfacedirective

import (
	"context"
	"io"
)

// Closer's only guardable method leaves the timeout off.
//
//resilience:timeout duration=1s
type Closer interface {
	io.Closer
	// Ping is not limited.
	//
	//resilience:none
	Ping(ctx context.Context) error
}

// Store's methods each have a retry of their own.
//
//resilience:retry abortOn=io.EOF
type Store interface {
	//resilience:retry maxAttempts=2
	Get(ctx context.Context) (string, error)
	//resilience:retry maxAttempts=3
	Put(ctx context.Context) error
}
