// Command permethod shows what a //resilience: directive on an interface means: without
// name=, each method gets its own instance (Geocoder: 2 calls per second for each
// method); with name=, the methods share one (Router: 2 calls per second in all). The
// wrappers are in resilient_gen.go, written by resilience4go-gen from apis.go:
//
//	go generate ./examples/permethod
//	go run ./examples/permethod
//
// A manual clock makes the output the same on every run.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "permethod:", err)
		os.Exit(1)
	}
}

// api implements both interfaces in memory.
type api struct{}

func (api) Forward(context.Context, string) (string, error)       { return "48.8566,2.3522", nil }
func (api) Reverse(context.Context, string) (string, error)       { return "Paris", nil }
func (api) Route(context.Context, string, string) (string, error) { return "12 km", nil }
func (api) Matrix(context.Context, string) (string, error)        { return "[[0,12],[12,0]]", nil }

func run(ctx context.Context, w io.Writer) error {
	reg, err := resilience.NewRegistry(resilience.WithClock(clock.NewManual()))
	if err != nil {
		return err
	}
	geo, err := NewGeocoderResilient(api{}, reg)
	if err != nil {
		return err
	}
	router, err := NewRouterResilient(api{}, reg)
	if err != nil {
		return err
	}
	outcome := func(_ string, err error) string {
		switch {
		case errors.Is(err, ratelimit.ErrExceeded):
			return "refused"
		case err != nil:
			return err.Error()
		}
		return "passed"
	}

	fmt.Fprintln(w, "Geocoder (permits=2 period=1s, an instance per method):")
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(w, "  Forward %d: %s\n", i, outcome(geo.Forward(ctx, "Paris")))
	}
	for i := 1; i <= 2; i++ {
		fmt.Fprintf(w, "  Reverse %d: %s\n", i, outcome(geo.Reverse(ctx, "48.8566,2.3522")))
	}
	fmt.Fprintln(w, "Router (name=routing permits=2 period=1s, one instance):")
	fmt.Fprintf(w, "  Route 1: %s\n", outcome(router.Route(ctx, "Paris", "Versailles")))
	fmt.Fprintf(w, "  Matrix 1: %s\n", outcome(router.Matrix(ctx, "Paris,Versailles")))
	fmt.Fprintf(w, "  Route 2: %s\n", outcome(router.Route(ctx, "Paris", "Versailles")))

	fmt.Fprint(w, "rate limiters:")
	for _, l := range reg.Snapshot().RateLimiters {
		fmt.Fprintf(w, " %s", l.Instance)
	}
	fmt.Fprintln(w)
	return nil
}
