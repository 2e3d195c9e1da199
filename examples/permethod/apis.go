package main

import "context"

//go:generate go run github.com/resilience4go/resilience4go/cmd/resilience4go-gen

// Geocoder calls a geocoding API whose quota is per endpoint. A directive on the
// interface applies to each method with its own instance: Forward and Reverse get 2 calls
// per second EACH (rate limiters Geocoder.Forward and Geocoder.Reverse).
//
//resilience:ratelimiter permits=2 period=1s
type Geocoder interface {
	Forward(ctx context.Context, address string) (string, error)
	Reverse(ctx context.Context, position string) (string, error)
}

// Router calls a routing API whose quota covers the whole API. With name=, the methods
// share one instance: Route and Matrix take their permits from one rate limiter,
// "routing", 2 calls per second for both together.
//
//resilience:ratelimiter name=routing permits=2 period=1s
type Router interface {
	Route(ctx context.Context, from, to string) (string, error)
	Matrix(ctx context.Context, places string) (string, error)
}
