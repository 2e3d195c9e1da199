// Command circuitbreaker guards calls to a payment service that goes down for a while, on
// a manual clock: once half of the last 4 calls have failed, the breaker opens and the
// calls fail at once with a rejection matching circuitbreaker.ErrOpen, without reaching
// the service; 10s later the next call moves it to half-open, and two trial calls that
// succeed close it again. The composition's own rate limiter is in the breaker's IgnoreOn,
// so that its rejections never open the breaker.
//
//	go run ./examples/circuitbreaker
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
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "circuitbreaker:", err)
		os.Exit(1)
	}
}

// errDown is the payment service's answer while it is down.
var errDown = errors.New("payment service down")

func run(ctx context.Context, w io.Writer) error {
	clk := clock.NewManual() // clock.System() in production: leave WithClock out
	reg, err := resilience.NewRegistry(resilience.WithClock(clk),
		resilience.WithEventListener(func(e policy.Event) {
			if e.Kind == circuitbreaker.EventTransition {
				fmt.Fprintf(w, "%7v   breaker %v -> %v\n", clk.Now(), e.Attr("from"), e.Attr("to"))
			}
		}))
	if err != nil {
		return err
	}
	down := true
	reached := 0 // calls that reached the service
	charge := func(ctx context.Context, cents int) (string, error) {
		reached++
		if down {
			return "", errDown
		}
		return fmt.Sprintf("charged %d", cents), nil
	}

	// README:begin breaker
	pay, err := resilience.Wrap1(reg, "Payments.Charge", charge,
		resilience.CircuitBreaker(
			circuitbreaker.SlidingWindowSize(4),     // the outcomes of the last 4 calls
			circuitbreaker.MinimumCalls(4),          // counted once there are 4 of them
			circuitbreaker.FailureRateThreshold(50), // open at 50% failures or more
			circuitbreaker.WaitInOpen(10*time.Second),
			circuitbreaker.PermittedInHalfOpen(2),           // two trial calls decide
			circuitbreaker.IgnoreOn(ratelimit.ErrExceeded)), // our own limiter's rejections are not the service failing
		resilience.RateLimiter(ratelimit.Permits(100), ratelimit.Period(time.Second)))
	if err != nil {
		return err // a *policy.ConfigError with its R4C code
	}
	call := func() {
		got, err := pay(ctx, 1250)
		fmt.Fprintf(w, "%7v %q %v (open: %v)\n", clk.Now(), got, err, errors.Is(err, circuitbreaker.ErrOpen))
	}
	// README:end breaker

	for range 5 {
		call() // 4 failures open the breaker; the 5th call is refused
	}
	fmt.Fprintf(w, "calls that reached the service: %d\n", reached)
	down = false
	clk.Advance(10 * time.Second)
	for range 3 {
		call() // the first moves it to half-open; two successes close it
	}
	b, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "Payments.Charge")
	if err != nil {
		return err
	}
	s := b.Snapshot()
	fmt.Fprintf(w, "state %s, buffered calls %d, calls that reached the service: %d\n", s.State, s.BufferedCalls, reached)
	return nil
}
