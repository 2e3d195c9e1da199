package main

import (
	"context"
	"errors"
)

//go:generate go run github.com/resilience4go/resilience4go/cmd/resilience4go-gen

// ErrNotFound is the pricing service's answer for a product it does not sell: trying
// again cannot change it.
var ErrNotFound = errors.New("no such product")

// Price is a price in cents. The zero Price is an unknown one.
type Price struct {
	Cents    int64
	Currency string
}

// PriceClient calls a pricing service whose quota, 5 calls per second, covers its whole
// API: both methods take their permits from one rate limiter, named "pricing".
//
//resilience:ratelimiter name=pricing permits=5 period=1s
type PriceClient interface {
	// Price returns the price of sku. A failed call is tried up to 3 times, 100ms apart,
	// unless the product does not exist; when every attempt fails, the price is unknown.
	//
	//resilience:retry maxAttempts=3 delay=100ms abortOn=ErrNotFound
	//resilience:fallback method=unknownPrice ignoreOn=ErrNotFound
	Price(ctx context.Context, sku string) (Price, error)

	// Stock returns how many of sku are in stock.
	Stock(ctx context.Context, sku string) (int, error)
}

// unknownPrice answers for Price when its policies could not get a price: an unknown
// price, instead of the error.
func unknownPrice(context.Context, error) (Price, error) { return Price{}, nil }
