// Package unusedimportoverridden has interface-level directives that every method
// replaces with its own of the same policy. The generated file must not import what only
// the replaced directives use: package time (period=1s) and package io (abortOn=io.EOF),
// nor package retry for a retry without options.
package unusedimportoverridden

import (
	"context"
	"io"
)

// Over has defaults that its method replaces.
//
//resilience:ratelimiter permits=5 period=1s
//resilience:retry maxAttempts=3 abortOn=io.EOF
type Over interface {
	// Get replaces both.
	//
	//resilience:ratelimiter permits=7
	//resilience:retry
	Get(ctx context.Context) (string, error)
}

var _ = io.EOF
