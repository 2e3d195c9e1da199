// Command manualclock shows how to test code that uses resilience4go's policies without
// waiting: a registry built with a manual clock gives every policy that clock, so retry
// delays, waits for a permit and timeouts take no real time. The tests in main_test.go
// are the point of this example; main runs the first of them as a program.
//
//	go run ./examples/manualclock
//	go test ./examples/manualclock
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// errUnavailable is what the inventory service answers while it is down.
var errUnavailable = errors.New("503 Service Unavailable")

// newInventory wraps get, the inventory service's call, with the policies the code under
// test uses: 3 attempts 1s apart, and 5 calls per second, waiting up to 1s for a permit.
// The registry gives them its clock.
func newInventory(reg *resilience.Registry, get func(ctx context.Context, sku string) (int, error)) (func(ctx context.Context, sku string) (int, error), error) {
	return resilience.Wrap1(reg, "Inventory.Get", get,
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(time.Second)),
		resilience.RateLimiter(ratelimit.Permits(5), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Second)))
}

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "manualclock:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer) error {
	clk := clock.NewManual()
	reg, err := resilience.NewRegistry(resilience.WithClock(clk))
	if err != nil {
		return err
	}
	failures := 2
	get, err := newInventory(reg, func(ctx context.Context, sku string) (int, error) {
		if failures > 0 {
			failures--
			return 0, errUnavailable
		}
		return 7, nil
	})
	if err != nil {
		return err
	}
	start := time.Now()
	n, err := get(ctx, "apple")
	fmt.Fprintf(w, "%d in stock, err %v, after %v of clock time\n", n, err, clk.Now())
	if real := time.Since(start); real > time.Second {
		return fmt.Errorf("the call took %v of real time", real)
	}
	return nil
}
