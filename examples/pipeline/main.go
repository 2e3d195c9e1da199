// Command pipeline applies policies to calls given one at a time, with a Pipeline, and
// watches them through the registry: the handle of a rate limiter (registry.RateLimiter)
// and the snapshot of every instance (registry.Snapshot).
//
//	go run ./examples/pipeline
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

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "pipeline:", err)
		os.Exit(1)
	}
}

// backend is the service the pipelines call.
type backend struct{ reviewsDown bool }

func (b *backend) Search(_ context.Context, query string) (string, error) {
	return "results for " + query, nil
}

func (b *backend) Reviews(_ context.Context, product string) (string, error) {
	if b.reviewsDown {
		return "", errors.New("reviews: 503 Service Unavailable")
	}
	return "reviews of " + product, nil
}

func run(ctx context.Context, w io.Writer) error {
	clk := clock.NewManual()
	reg, err := resilience.NewRegistry(resilience.WithClock(clk))
	if err != nil {
		return err
	}
	be := &backend{}

	// The pipeline's id, "search", is the id of its policies.
	search, err := resilience.NewPipeline[string](reg, "search",
		resilience.RateLimiter(ratelimit.Permits(10), ratelimit.Period(time.Second)))
	if err != nil {
		return err
	}
	reviews, err := resilience.NewPipeline[string](reg, "reviews",
		resilience.RateLimiter(ratelimit.Permits(5), ratelimit.Period(time.Second)),
		resilience.CircuitBreaker(circuitbreaker.SlidingWindowSize(4), circuitbreaker.MinimumCalls(4),
			circuitbreaker.WaitInOpen(10*time.Second)),
		resilience.Bulkhead(bulkhead.MaxConcurrent(8)))
	if err != nil {
		return err
	}

	// The handle exists once the pipeline is built.
	limiter, err := reg.RateLimiter("search")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "limiter %q: %d permits available\n", limiter.Snapshot().Instance, limiter.Snapshot().AvailablePermits)

	var rejected int
	for i := 1; i <= 12; i++ {
		got, err := search.Execute(ctx, func(ctx context.Context) (string, error) {
			return be.Search(ctx, fmt.Sprint("resilience ", i))
		})
		switch {
		case errors.Is(err, ratelimit.ErrExceeded):
			rejected++
		case err != nil:
			return err
		case i == 1 || i == 10:
			fmt.Fprintf(w, "call %2d: %s; %d permits left\n", i, got, limiter.Snapshot().AvailablePermits)
		}
	}
	fmt.Fprintf(w, "12 calls: 10 passed, %d rejected with ratelimit.ErrExceeded\n", rejected)
	clk.Advance(300 * time.Millisecond)
	fmt.Fprintf(w, "300ms later: %d permits available\n", limiter.Snapshot().AvailablePermits)

	// The same pipeline runs calls that return futures.
	f := search.ExecuteAsync(ctx, func(ctx context.Context) *async.Future[string] {
		return async.Go(ctx, func(ctx context.Context) (string, error) { return be.Search(ctx, "async") })
	})
	got, err := f.Await(ctx)
	fmt.Fprintf(w, "ExecuteAsync: %s, %v; %d permits available\n", got, err, limiter.Snapshot().AvailablePermits)

	// The reviews service fails: its breaker opens after 4 failed calls out of 4.
	be.reviewsDown = true
	for i := 1; i <= 5; i++ {
		_, err := reviews.Execute(ctx, func(ctx context.Context) (string, error) { return be.Reviews(ctx, "p-42") })
		fmt.Fprintf(w, "reviews call %d: %v\n", i, err)
	}
	reviewsLimiter, err := reg.RateLimiter("reviews")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "calls 1-4 took a permit each; call 5, rejected by the open breaker, took none: %d of 5 permits left\n",
		reviewsLimiter.Snapshot().AvailablePermits)
	breaker, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "reviews")
	if err != nil {
		return err
	}
	bs := breaker.Snapshot()
	fmt.Fprintf(w, "breaker %q: %v\n", bs.Instance, bs.State)

	_, err = reg.RateLimiter("serach")
	fmt.Fprintf(w, "reg.RateLimiter(%q): %v\n", "serach", err)

	printSnapshot(w, reg.Snapshot())
	return nil
}

func printSnapshot(w io.Writer, s resilience.Snapshot) {
	fmt.Fprintln(w, "snapshot:")
	for _, rl := range s.RateLimiters {
		fmt.Fprintf(w, "  rate limiter    %-8s %2d of %2d permits available\n", rl.Instance, rl.AvailablePermits, rl.Permits)
	}
	for _, p := range s.Policies { // by layer, then id
		switch st := p.State.(type) {
		case circuitbreaker.Snapshot:
			fmt.Fprintf(w, "  circuit breaker %-8s %s, failure rate %.0f%% (%d of %d calls), calls not permitted: %d\n",
				st.Instance, st.State, st.FailureRate, st.FailedCalls, st.BufferedCalls, st.NotPermittedCalls)
		case bulkhead.Snapshot:
			fmt.Fprintf(w, "  bulkhead        %-8s %d of %d slots available, %d waiting\n",
				st.Instance, st.AvailableSlots, st.MaxConcurrent, st.Waiting)
		}
	}
}
