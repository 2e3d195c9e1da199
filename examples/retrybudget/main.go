// Command retrybudget puts two functions that call one inventory service, each with a
// retry of 3 attempts, behind one retry budget shared by name, on a manual clock. The
// service goes down: without the budget every call would cost it 3 attempts; with it,
// the retries stop once they reach the floor (here 1 per second over a 10s window, so 10)
// and, past it, 20% of the calls. A refused retry returns the last attempt's error as it
// is, and the budget says so in an event.
//
//	go run ./examples/retrybudget
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
	"github.com/resilience4go/resilience4go/policy/retrybudget"
	"github.com/resilience4go/resilience4go/resilience"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "retrybudget:", err)
		os.Exit(1)
	}
}

var errDown = errors.New("inventory: 503 service unavailable")

func run(ctx context.Context, w io.Writer) error {
	clk := clock.NewManual() // clock.System() in production: leave WithClock out
	refused := 0
	reg, err := resilience.NewRegistry(resilience.WithClock(clk),
		resilience.WithEventListener(func(e policy.Event) {
			if e.Kind == retrybudget.EventRefused {
				if refused++; refused <= 2 { // the first two, then only counted
					fmt.Fprintf(w, "%7v   event %v\n", clk.Now(), e)
				}
			}
		}))
	if err != nil {
		return err
	}
	attempts := 0
	inventory := func(ctx context.Context, sku string) (int, error) {
		attempts++
		return 0, errDown // the service is down
	}

	// README:begin retrybudget
	budget := resilience.RetryBudget(
		retrybudget.Name("inventory"), // one budget for every function that names it
		retrybudget.Ratio(0.2),        // retries: at most 20% of the calls...
		retrybudget.MinPerSecond(1),   // ...but always 1 per second (10 per window)
		retrybudget.Window(10*time.Second))
	stock, err := resilience.Wrap1(reg, "Inventory.Stock", inventory,
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(0)), budget)
	if err != nil {
		return err // a *policy.ConfigError with its R4C code
	}
	reserve, err := resilience.Wrap1(reg, "Inventory.Reserve", inventory,
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(0)), budget)
	if err != nil {
		return err
	}
	// README:end retrybudget

	for i := range 100 { // 10 calls per second for 10s, half through each function
		clk.AdvanceTo(time.Duration(i) * 100 * time.Millisecond)
		call := stock
		if i%2 == 1 {
			call = reserve
		}
		if _, err := call(ctx, "sku-42"); !errors.Is(err, errDown) {
			return fmt.Errorf("call %d: %v", i, err)
		}
		if i == 9 || i == 99 {
			fmt.Fprintf(w, "%7v after %3d calls: %3d attempts reached the service\n", clk.Now(), i+1, attempts)
		}
	}
	b, err := resilience.Lookup[*retrybudget.Budget](reg, retrybudget.Layer, "inventory")
	if err != nil {
		return err
	}
	s := b.Snapshot()
	fmt.Fprintf(w, "budget %q: %d calls, %d retries, %d refused (without it: %d attempts)\n",
		s.Instance, s.Calls, s.ExtraAttempts, s.Refused, 3*100)
	return nil
}
