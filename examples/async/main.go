// Command async rate-limits a function that returns a future. A call that must wait for
// its permit is not parked on a goroutine: it is scheduled on the clock to start at its
// turn. Cancelling its future before then gives the permit back, so the next call gets
// the canceled slot; a call that has started keeps its permit.
//
//	go run ./examples/async
//
// It runs on a manual clock, so its output is the same on every run.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "async:", err)
		os.Exit(1)
	}
}

// latency is how long the geocoding service takes to answer.
const latency = 50 * time.Millisecond

func run(ctx context.Context, w io.Writer) error {
	clk := clock.NewManual()
	reg, err := resilience.NewRegistry(
		resilience.WithClock(clk),
		resilience.WithEventListener(func(e policy.Event) { fmt.Fprintf(w, "%7v   event %v\n", clk.Now(), e) }))
	if err != nil {
		return err
	}

	// geocodeAsync starts a request and returns its future; the service answers after
	// latency, on the clock.
	geocodeAsync := func(ctx context.Context, address string) *async.Future[string] {
		fmt.Fprintf(w, "%7v   %q: request sent\n", clk.Now(), address)
		f, complete := async.NewPromise[string]()
		clk.AfterFunc(latency, func() { complete("coordinates of "+address, nil) })
		return f
	}
	geocode, err := resilience.WrapAsync1(reg, "GeocodingAPI.GeocodeAsync", geocodeAsync,
		resilience.RateLimiter(
			ratelimit.Name("geocoding-async"),
			ratelimit.Permits(5),
			ratelimit.Period(time.Second),
			ratelimit.MaxWait(500*time.Millisecond)))
	if err != nil {
		return err
	}

	futures := map[int]*async.Future[string]{}
	call := func(n int) {
		fmt.Fprintf(w, "%7v #%d geocode(\"address %d\")\n", clk.Now(), n, n)
		f := geocode(ctx, fmt.Sprint("address ", n))
		futures[n] = f
		f.OnComplete(func(v string, err error) {
			if err != nil {
				fmt.Fprintf(w, "%7v #%d failed: %v\n", clk.Now(), n, err)
				return
			}
			fmt.Fprintf(w, "%7v #%d done: %s\n", clk.Now(), n, v)
		})
	}
	pending := func() {
		fmt.Fprintf(w, "%7v   clock tasks pending: %d\n", clk.Now(), clk.PendingTasks())
	}

	fmt.Fprintln(w, "-- 8 calls at once: limiter 5 per 1s, maxWait 500ms")
	for n := 1; n <= 8; n++ {
		call(n)
	}
	pending()

	fmt.Fprintln(w, "-- the answers of the first 5 arrive")
	clk.Advance(latency)
	pending()

	fmt.Fprintln(w, "-- cancel #7 while it waits for its permit: it never starts, its permit comes back")
	fmt.Fprintf(w, "%7v #7 Cancel() = %v\n", clk.Now(), futures[7].Cancel())
	pending()
	fmt.Fprintln(w, "-- the next call takes the canceled slot, at 400ms")
	call(9)
	pending()

	fmt.Fprintln(w, "-- #9 starts at its turn; cancelling it then does not give its permit back")
	clk.AdvanceTo(400 * time.Millisecond)
	fmt.Fprintf(w, "%7v #9 Cancel() = %v\n", clk.Now(), futures[9].Cancel())
	fmt.Fprintln(w, "-- so the next call waits for the following slot, at 600ms")
	call(10)

	fmt.Fprintln(w, "-- the rest")
	clk.Advance(time.Second)
	pending()
	return nil
}
