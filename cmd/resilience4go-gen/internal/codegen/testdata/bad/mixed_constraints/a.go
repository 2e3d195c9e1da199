//go:build linux

// Package mixedconstraints has interfaces in files of different build constraints.
package mixedconstraints

import "context"

// A is for Linux.
type A interface {
	//resilience:timeout duration=1s
	Get(ctx context.Context) (string, error)
}
