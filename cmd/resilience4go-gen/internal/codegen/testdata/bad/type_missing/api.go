// Package typemissing has an interface and a struct.
package typemissing

import "context"

// SearchAPI is guarded.
type SearchAPI interface {
	//resilience:timeout duration=1s
	Search(ctx context.Context, query string) (string, error)
}

// Client is not an interface.
type Client struct{}
