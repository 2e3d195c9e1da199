// Command ratelimit shows the rate limiter three ways, on a manual clock: wrapped around a
// function by a registry, with a caller that waits up to 100ms for its permit; on its
// own, with TryAcquire, Reserve and a retry-after; and per client, with a keyed limiter
// whose clients do not share permits.
//
//	go run ./examples/ratelimit
//
// It runs on a manual clock, so its output is the same on every run.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	"github.com/resilience4go/resilience4go/resilience"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ratelimit:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer) error {
	clk := clock.NewManual() // clock.System() in production: leave WithClock out
	if err := wrapped(ctx, w, clk); err != nil {
		return err
	}
	if err := standalone(w, clk); err != nil {
		return err
	}
	return perClient(ctx, w, clk)
}

// wrapped guards a function with a limiter of 5 calls per second, whose callers wait up
// to 100ms for their permit.
func wrapped(ctx context.Context, w io.Writer, clk *clock.Manual) error {
	fmt.Fprintln(w, "-- wrapped: 5 per second, waiting up to 100ms")
	reg, err := resilience.NewRegistry(resilience.WithClock(clk))
	if err != nil {
		return err
	}
	geocode := func(ctx context.Context, place string) (string, error) { return "found " + place, nil }
	// README:begin wrapped
	limited, err := resilience.Wrap1(reg, "GeoAPI.Geocode", geocode,
		resilience.RateLimiter(
			ratelimit.Permits(5), ratelimit.Period(time.Second), // a burst of 5, then one every 200ms
			ratelimit.MaxWait(100*time.Millisecond))) // wait for a permit that comes within 100ms
	if err != nil {
		return err // a *policy.ConfigError with its R4C code
	}
	call := func(place string) {
		start := clk.Now()
		got, err := limited(ctx, place)
		if e, ok := errors.AsType[*ratelimit.ExceededError](err); ok { // matches ratelimit.ErrExceeded
			wait, _ := e.RetryIn() // how long until the limiter's next permit is free
			fmt.Fprintf(w, "%6v %s: rejected at once, retry in %v\n", start, place, wait)
			return
		}
		fmt.Fprintf(w, "%6v %s after waiting %v\n", start, got, clk.Now()-start)
	}
	for _, place := range []string{"Paris", "Lyon", "Nice", "Lille", "Brest", "Metz"} {
		call(place) // the burst of 5 passes; the 6th permit is 200ms away, beyond MaxWait
	}
	clk.Advance(100 * time.Millisecond)
	call("Metz") // its permit is 100ms away now: it waits for it
	// README:end wrapped
	return nil
}

// standalone uses a limiter without a registry: TryAcquire, Reserve and its retry-after.
func standalone(w io.Writer, clk *clock.Manual) error {
	fmt.Fprintln(w, "-- on its own: 2 per second")
	clk.Advance(time.Second) // start from a full burst
	// README:begin standalone
	l, err := ratelimit.New(ratelimit.Name("reports"),
		ratelimit.Permits(2), ratelimit.Period(time.Second),
		ratelimit.WithClock(clk)) // leave out for the system clock
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "try:", l.TryAcquire(), l.TryAcquire(), l.TryAcquire()) // a burst of 2, then none
	r, err := l.Reserve()                                                   // MaxWait is 0: refused, and its Delay is the retry-after
	fmt.Fprintln(w, "reserve:", err, "- retry after", r.Delay())
	clk.Advance(r.Delay())
	fmt.Fprintln(w, "after the retry-after:", l.TryAcquire())
	// README:end standalone
	return nil
}

// perClient limits each client to 2 calls per second: one client spending its quota
// leaves the others theirs.
func perClient(ctx context.Context, w io.Writer, clk *clock.Manual) error {
	fmt.Fprintln(w, "-- per client: 2 per second each")
	// README:begin keyed
	perClient, err := keyed.New[string](
		ratelimit.Permits(2), ratelimit.Period(time.Second), // for each client
		keyed.Bounds(10_000, 0), // hold at most 10,000 clients
		ratelimit.WithClock(clk))
	if err != nil {
		return err
	}
	for _, client := range []string{"alice", "alice", "alice", "bob"} {
		d := perClient.Decide(ctx, client) // one permit, if free now, and the key's quota
		fmt.Fprintf(w, "%-5s admitted=%-5v remaining=%d retry-after=%v\n",
			client, d.Admitted, d.Remaining, d.RetryAfter)
	}
	// README:end keyed
	return nil
}
