// Package fallbackmissing names a fallback that does not exist.
package fallbackmissing

import "context"

// API is guarded.
type API interface {
	//resilience:fallback method=unknownPrise
	Price(ctx context.Context, sku string) (int64, error)
}

func unknownPrice(context.Context, error) (int64, error) { return 0, nil }
