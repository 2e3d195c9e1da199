// Package bad has errors in its directives.
package bad

import "context"

// SearchAPI searches.
type SearchAPI interface {
	// Search has a misspelt directive.
	//
	//resilience:ratelimitter permits=10 period=1s
	Search(ctx context.Context, query string) (string, error)

	// Suggest has a duration of the wrong syntax.
	//
	//resilience:timeout duration=1x
	Suggest(ctx context.Context, prefix string) ([]string, error)
}
