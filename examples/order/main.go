// Command order shows the rule of the default order for a circuit breaker and a rate
// limiter: the breaker is outside the limiter, so the limiter's own rejections are errors
// to it, and open it, unless it ignores them; and a retry outside the limiter retries
// them, unless it aborts on them. A manual clock makes the output the same on every run.
//
//	go run ./examples/order
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "order:", err)
		os.Exit(1)
	}
}

func search(ctx context.Context, q string) (string, error) { return "results for " + q, nil }

func run(ctx context.Context, w io.Writer) error {
	clk := clock.NewManual()
	reg, err := resilience.NewRegistry(resilience.WithClock(clk))
	if err != nil {
		return err
	}

	// README:begin breaker-rule
	// The breaker is outside the limiter: without IgnoreOn, the limiter's rejections are
	// failures to it, and a client that only goes over its own quota opens its breaker.
	opens, err := resilience.Wrap1(reg, "Search.Opens", search,
		resilience.CircuitBreaker(circuitbreaker.SlidingWindowSize(4), circuitbreaker.MinimumCalls(4)),
		resilience.RateLimiter(ratelimit.Permits(2), ratelimit.Period(time.Hour)))
	if err != nil {
		return err
	}
	// The remedy: the breaker ignores the limiter's rejections, which say nothing of the
	// dependency's health.
	stays, err := resilience.Wrap1(reg, "Search.Stays", search,
		resilience.CircuitBreaker(circuitbreaker.SlidingWindowSize(4), circuitbreaker.MinimumCalls(4),
			circuitbreaker.IgnoreOn(ratelimit.ErrExceeded)),
		resilience.RateLimiter(ratelimit.Permits(2), ratelimit.Period(time.Hour)))
	// README:end breaker-rule
	if err != nil {
		return err
	}
	for _, c := range []struct {
		id   string
		call func(context.Context, string) (string, error)
	}{{"Search.Opens", opens}, {"Search.Stays", stays}} {
		var outcomes []string
		for range 5 {
			_, err := c.call(ctx, "go")
			outcomes = append(outcomes, outcome(err))
		}
		b, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, c.id)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s, 5 calls: %s; the breaker is %s\n", c.id, strings.Join(outcomes, ", "), b.Snapshot().State)
	}

	// README:begin retry-rule
	// A retry outside the limiter retries its rejections after its delay, each attempt
	// taking a permit of its own: here 3 attempts, 200ms, for a permit an hour away.
	retries, err := resilience.Wrap1(reg, "Search.Retries", search,
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(100*time.Millisecond)),
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Hour)))
	if err != nil {
		return err
	}
	// The remedy: the retry aborts on a rejection (fails fast), or, with
	// retry.WaitForPermit(true), waits until the permit is due before its next attempt.
	aborts, err := resilience.Wrap1(reg, "Search.Aborts", search,
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(100*time.Millisecond),
			retry.AbortOn(ratelimit.ErrExceeded)),
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Hour)))
	// README:end retry-rule
	if err != nil {
		return err
	}
	for _, c := range []struct {
		id   string
		call func(context.Context, string) (string, error)
	}{{"Search.Retries", retries}, {"Search.Aborts", aborts}} {
		_, _ = c.call(ctx, "go") // the one permit
		start := clk.Now()
		_, err := c.call(ctx, "go")
		fmt.Fprintf(w, "%s, a call over the quota: %s after %v\n", c.id, outcome(err), clk.Now()-start)
	}
	return nil
}

// outcome names what a call's error says.
func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, circuitbreaker.ErrOpen):
		return "breaker open"
	case errors.Is(err, ratelimit.ErrExceeded):
		return "rate limited"
	}
	return err.Error()
}
