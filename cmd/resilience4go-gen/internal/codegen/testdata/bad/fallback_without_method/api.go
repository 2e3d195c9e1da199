// Package fallbackwithoutmethod has a fallback without method=.
package fallbackwithoutmethod

import (
	"context"
	"errors"
)

// ErrBadInput is handled by the fallback.
var ErrBadInput = errors.New("bad input")

// API is guarded.
type API interface {
	//resilience:fallback handleOn=ErrBadInput
	Price(ctx context.Context, sku string) (int64, error)
}
