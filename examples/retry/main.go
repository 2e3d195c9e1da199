// Command retry retries a flaky inventory service on a manual clock: with exponential
// backoff (100ms, then 200ms) a call that fails twice succeeds on its third attempt; an
// error that trying again cannot change (ErrNotFound, in AbortOn) is not retried; a call
// that keeps failing returns its last attempt's error as is. Then a retry in front of a
// rate limiter of 1 call per second waits for the limiter's next permit (WaitForPermit)
// instead of spending its attempts on a permit that is not there yet.
//
//	go run ./examples/retry
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
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "retry:", err)
		os.Exit(1)
	}
}

var (
	// ErrNotFound is the service's answer for an item it does not have: trying again
	// cannot change it.
	ErrNotFound = errors.New("no such item")
	// errUnavailable is the service failing for a while.
	errUnavailable = errors.New("service unavailable")
)

func run(ctx context.Context, w io.Writer) error {
	clk := clock.NewManual() // clock.System() in production: leave WithClock out
	reg, err := resilience.NewRegistry(resilience.WithClock(clk),
		resilience.WithEventListener(func(e policy.Event) {
			fmt.Fprintf(w, "%7v   event %v\n", clk.Now(), e)
		}))
	if err != nil {
		return err
	}
	if err := backoff(ctx, w, clk, reg); err != nil {
		return err
	}
	return waitForPermit(ctx, w, clk, reg)
}

// backoff retries a service whose answers for each item are scripted: failures first,
// then a stock count.
func backoff(ctx context.Context, w io.Writer, clk *clock.Manual, reg *resilience.Registry) error {
	failures := map[string][]error{
		"pen":  {errUnavailable, errUnavailable},                 // fails twice, then answers
		"ink":  {ErrNotFound},                                    // does not exist
		"lamp": {errUnavailable, errUnavailable, errUnavailable}, // fails for longer than the retry tries
	}
	stock := func(ctx context.Context, item string) (int, error) {
		if errs := failures[item]; len(errs) > 0 {
			failures[item] = errs[1:]
			return 0, errs[0]
		}
		return 7, nil
	}
	// README:begin backoff
	getStock, err := resilience.Wrap1(reg, "Inventory.Stock", stock,
		resilience.Retry(
			retry.MaxAttempts(3),              // the first attempt and two retries
			retry.Delay(100*time.Millisecond), // 100ms before the second attempt,
			retry.Multiplier(2),               // 200ms before the third
			retry.Jitter(0),                   // in production, e.g. 0.2 spreads the retries of many callers
			retry.AbortOn(ErrNotFound)))       // trying again cannot change it
	if err != nil {
		return err // a *policy.ConfigError with its R4C code
	}
	for _, item := range []string{"pen", "ink", "lamp"} {
		start := clk.Now()
		n, err := getStock(ctx, item)
		fmt.Fprintf(w, "%7v %s: %d, %v (after %v; not found: %v)\n",
			clk.Now(), item, n, err, clk.Now()-start, errors.Is(err, ErrNotFound))
	}
	// README:end backoff
	return nil
}

// waitForPermit retries a call that its own rate limiter refused: with WaitForPermit,
// the retry waits until the limiter's next permit instead of its 100ms delay.
func waitForPermit(ctx context.Context, w io.Writer, clk *clock.Manual, reg *resilience.Registry) error {
	fmt.Fprintln(w, "-- a retry in front of a limiter of 1 call per second")
	report := func(ctx context.Context) (string, error) { return "report", nil }
	// README:begin waitforpermit
	getReport, err := resilience.Wrap(reg, "Reports.Get", report,
		resilience.Retry(retry.MaxAttempts(2), retry.Delay(100*time.Millisecond),
			retry.WaitForPermit(true)), // after a rejection by the limiter, wait for its next permit
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)))
	// README:end waitforpermit
	if err != nil {
		return err
	}
	for range 2 {
		start := clk.Now()
		got, err := getReport(ctx)
		fmt.Fprintf(w, "%7v %q %v (after %v)\n", clk.Now(), got, err, clk.Now()-start)
	}
	return nil
}
