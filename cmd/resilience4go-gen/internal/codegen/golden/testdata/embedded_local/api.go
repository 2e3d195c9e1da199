// Package embeddedlocal embeds an interface of its own whose method has a directive: the
// method keeps it in the interface that embeds it, beside that interface's own.
package embeddedlocal

import "context"

// Base retries Get.
type Base interface {
	// Get reads.
	//
	//resilience:retry maxAttempts=2
	Get(ctx context.Context, id string) (string, error)
}

// Outer limits every method, and takes Get's retry from Base.
//
//resilience:ratelimiter name=outer permits=5 period=1s
type Outer interface {
	Base
	// Put writes.
	Put(ctx context.Context, id string) error
}
