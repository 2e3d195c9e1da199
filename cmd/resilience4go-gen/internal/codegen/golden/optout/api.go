// Package optout has a method that leaves its interface's directives off, and error lists
// that name errors by import path, of packages its file does not import.
package optout

import "context"

//go:generate go run github.com/resilience4go/resilience4go/cmd/resilience4go-gen

// Store shares one rate limiter among its methods, but Health.
//
//resilience:ratelimiter name=store permits=2 period=1s
type Store interface {
	// Get reads a key; a retry gives up at once on io.EOF and http.ErrServerClosed.
	//
	//resilience:retry maxAttempts=3 delay=10ms abortOn=io.EOF,net/http.ErrServerClosed
	Get(ctx context.Context, key string) (string, error)

	// Put writes a key.
	Put(ctx context.Context, key, value string) error

	// Health is called by probes, which the quota must not refuse.
	//
	//resilience:none
	Health(ctx context.Context) error
}
