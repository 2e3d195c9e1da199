// Command quickstart wraps a search function with a rate limiter of 10 calls per second
// and drives it with a manual clock: a burst of 10 passes at once, the 11th call is
// rejected, and one permit comes back every 100ms.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, w io.Writer) error {
	clk := clock.NewManual() // time moves only when we say so; use clock.System() in production
	reg, err := resilience.NewRegistry(resilience.WithClock(clk))
	if err != nil {
		return err
	}
	search, err := resilience.Wrap1(reg, "SearchAPI.Search",
		func(ctx context.Context, query string) (string, error) { return "results for " + query, nil },
		resilience.RateLimiter(ratelimit.Permits(10), ratelimit.Period(time.Second)))
	if err != nil {
		return err
	}

	for i := range 10 { // a full burst of 10 passes at once
		if _, err := search(ctx, fmt.Sprint("q", i)); err != nil {
			return err
		}
	}
	_, err = search(ctx, "one too many")
	fmt.Fprintln(w, errors.Is(err, ratelimit.ErrExceeded), err)

	clk.Advance(100 * time.Millisecond) // permits come back one every 1s / 10
	got, err := search(ctx, "next")
	fmt.Fprintln(w, got, err)
	_, err = search(ctx, "again")
	fmt.Fprintln(w, errors.Is(err, ratelimit.ErrExceeded), err)
	return nil
}
