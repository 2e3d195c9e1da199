// Command chaos tests a retry against a dependency that misbehaves on purpose: a chaos
// layer, off until the configuration turns it on, injects a latency and an error into a
// share of the calls to an inventory service, and the retry outside it saves most of
// them. A reload switches the chaos on, and off again, while the service runs.
//
//	go run ./examples/chaos
//
// It runs on a manual clock with a seeded chaos policy, so its output is the same on
// every run.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/chaos"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/resilience"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(1)
	}
}

// errUnavailable is the fault the chaos layer injects: what the inventory service
// answers when it is down.
var errUnavailable = errors.New("inventory: 503 service unavailable")

func run(ctx context.Context, w io.Writer) error {
	clk := clock.NewManual() // clock.System() in production: leave WithClock out
	reg, err := resilience.NewRegistry(resilience.WithClock(clk))
	if err != nil {
		return err
	}
	stock := func(context.Context, string) (int, error) { return 42, nil }

	// README:begin chaos
	get, err := resilience.Wrap1(reg, "Inventory.Get", stock,
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(100*time.Millisecond)),
		// Off until chaos.enabled says otherwise; Seed only to make this run repeatable.
		resilience.Chaos(chaos.Error(errUnavailable), chaos.Latency(50*time.Millisecond), chaos.Seed(7)))
	if err != nil {
		return err // a *policy.ConfigError with its R4C code
	}
	phase := func(name string) {
		failed, start := 0, clk.Now()
		for range 20 {
			if _, err := get(ctx, "sku-1"); err != nil {
				failed++
			}
		}
		c, _ := resilience.Lookup[*chaos.Chaos](reg, chaos.Layer, "Inventory.Get")
		s := c.Snapshot()
		fmt.Fprintf(w, "%-22s 20 calls, %2d failed, took %-6v injected so far: %d errors, %d latencies\n",
			name, failed, clk.Now()-start, s.Errors, s.Latencies)
	}
	phase("chaos off (default):")
	if err := reg.Reload(map[string]string{"instances.Inventory.Get.chaos.enabled": "true",
		"instances.Inventory.Get.chaos.rate": "0.5"}); err != nil {
		return err
	}
	phase("chaos on, rate 0.5:")
	if err := reg.Reload(nil); err != nil { // the keys are gone: off again
		return err
	}
	phase("chaos off again:")
	// README:end chaos
	return nil
}
