// Package fallbackwrongresult has a fallback of the wrong result type.
package fallbackwrongresult

import "context"

// API is guarded.
type API interface {
	//resilience:fallback method=unknownPrice
	Price(ctx context.Context, sku string) (int64, error)
}

func unknownPrice(context.Context, error) (string, error) { return "", nil }
