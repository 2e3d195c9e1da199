// Command fallback answers with the last known price when the pricing service fails, on
// a manual clock: a failure is replaced by the cached price (after a FallbackApplied
// event), while ErrNotFound, an answer rather than a failure, passes through untouched,
// and so does a success.
//
//	go run ./examples/fallback
//
// It runs on a manual clock, so its output is the same on every run.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/fallback"
	"github.com/resilience4go/resilience4go/resilience"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fallback:", err)
		os.Exit(1)
	}
}

var (
	// ErrNotFound is the pricing service's answer for a product it does not sell.
	ErrNotFound = errors.New("no such product")
	// errUnavailable is the pricing service failing.
	errUnavailable = errors.New("pricing service unavailable")
)

func run(ctx context.Context, w io.Writer) error {
	clk := clock.NewManual() // clock.System() in production: leave WithClock out
	reg, err := resilience.NewRegistry(resilience.WithClock(clk),
		resilience.WithEventListener(func(e policy.Event) {
			fmt.Fprintf(w, "  event %v\n", e)
		}))
	if err != nil {
		return err
	}
	answers := map[string]error{"pen": nil, "ink": errUnavailable, "kite": ErrNotFound}
	price := func(ctx context.Context, sku string) (int, error) {
		if err := answers[sku]; err != nil {
			return 0, err
		}
		return 120, nil
	}
	cached := map[string]int{"ink": 95} // the last prices seen

	// README:begin fallback
	lastKnown := func(ctx context.Context, err error) (int, error) {
		// The fallback sees the error, not the call's arguments: the SKU travels in ctx.
		if p, ok := cached[ctx.Value(skuKey{}).(string)]; ok {
			return p, nil
		}
		return 0, err // nothing better to answer: the error stands
	}
	getPrice, err := resilience.Wrap1(reg, "Pricing.Price", price,
		resilience.Fallback(lastKnown,
			fallback.IgnoreOn(ErrNotFound))) // an answer, not a failure: passed through
	if err != nil {
		return err // a *policy.ConfigError with its R4C code
	}
	for _, sku := range []string{"pen", "ink", "kite"} {
		p, err := getPrice(context.WithValue(ctx, skuKey{}, sku), sku)
		fmt.Fprintf(w, "%s: %d %v\n", sku, p, err)
	}
	// README:end fallback
	return nil
}

// skuKey is the context key of the SKU asked for, which the fallback reads.
type skuKey struct{}
