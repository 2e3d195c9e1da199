// Package seed holds the interfaces of the original rate limiter document, with their
// generated wrappers.
package seed

import "context"

//go:generate go run github.com/resilience4go/resilience4go/cmd/resilience4go-gen

// SearchAPI searches.
type SearchAPI interface {
	// Search returns the results for query.
	//resilience:ratelimiter permits=10 period=1s
	Search(ctx context.Context, query string) (string, error)
}

// GeocodingAPI shares one quota between its methods.
//
//resilience:ratelimiter name=geocoding permits=5 period=1s maxWait=500ms
type GeocodingAPI interface {
	// Geocode returns the coordinates of address.
	Geocode(ctx context.Context, address string) (string, error)
	// Reverse returns the address at lat, lon.
	Reverse(ctx context.Context, lat, lon float64) (string, error)
}
