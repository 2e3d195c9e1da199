// Package good has two interfaces with directives.
package good

import "context"

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
}
