//go:build amd64 || arm64

// Package buildsuffix declares its interface in a file for some platforms only, by a
// build line and by its name's _linux suffix.
package buildsuffix

import "context"

// API is guarded.
type API interface {
	//resilience:timeout duration=1s
	Get(ctx context.Context, id string) (string, error)
}
