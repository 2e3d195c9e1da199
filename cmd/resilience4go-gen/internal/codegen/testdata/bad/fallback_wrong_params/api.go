// Package fallbackwrongparams has a fallback of the wrong parameters.
package fallbackwrongparams

import "context"

// API is guarded.
type API interface {
	// Price has a method of the interface as its fallback.
	//
	//resilience:fallback method=PriceFallback
	Price(ctx context.Context, sku string) (int64, error)

	// PriceFallback takes the call's argument, not its error.
	PriceFallback(ctx context.Context, sku string) (int64, error)
}
