// Command locked locks the values a spec sets in code against the configuration keys: a
// retry whose attempts the code fixes at 2 keeps them when an instances.<id> key, at the
// start or in a reload, says 5, and the registry lists and reports the key it ignores
// (R4C-CFG-014). What the code leaves unset (the delay) still comes from the keys.
//
//	go run ./examples/locked
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/resilience"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "locked:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer) error {
	// README:begin locked
	props := map[string]string{
		"instances.Payments.Charge.retry.maxAttempts": "5",     // ignored: locked in code
		"instances.Payments.Charge.retry.delay":       "200ms", // applies: the code leaves it
		"instances.Payments.Refund.retry.maxAttempts": "5",     // applies: not locked
	}
	reg, err := resilience.NewRegistry(resilience.WithProperties(props),
		resilience.WithClock(clock.NewManual()), // no real waits between attempts
		resilience.WithEventListener(func(e policy.Event) {
			if e.Kind == resilience.EventLockedOverride {
				fmt.Fprintf(w, "reported: %v\n", e.Err) // once per key, when it is first ignored
			}
		}))
	if err != nil {
		return err
	}
	// A charge is attempted at most twice, whatever the configuration says.
	charge, err := resilience.Wrap(reg, "Payments.Charge", flaky(w, "charge"),
		resilience.Locked(resilience.Retry(retry.MaxAttempts(2))))
	if err != nil {
		return err
	}
	refund, err := resilience.Wrap(reg, "Payments.Refund", flaky(w, "refund"),
		resilience.Retry(retry.MaxAttempts(2)))
	if err != nil {
		return err
	}
	// README:end locked

	for _, call := range []struct {
		name string
		fn   func(context.Context) (string, error)
	}{{"charge", charge}, {"refund", refund}} {
		_, err := call.fn(ctx)
		fmt.Fprintf(w, "%s: %v\n", call.name, err)
	}
	for _, id := range []string{"Payments.Charge", "Payments.Refund"} {
		rt, err := resilience.Lookup[*retry.Retry](reg, retry.Layer, id)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s: maxAttempts %d, delay %v\n", id, rt.Config().MaxAttempts, rt.Config().Delay)
	}

	fmt.Fprintln(w, "reload: maxAttempts 7 for both")
	props["instances.Payments.Charge.retry.maxAttempts"] = "7"
	props["instances.Payments.Refund.retry.maxAttempts"] = "7"
	if err := reg.Reload(props); err != nil {
		return err
	}
	for _, id := range []string{"Payments.Charge", "Payments.Refund"} {
		rt, err := resilience.Lookup[*retry.Retry](reg, retry.Layer, id)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s: maxAttempts %d\n", id, rt.Config().MaxAttempts)
	}
	fmt.Fprintln(w, "locked overrides now:")
	for _, ce := range reg.LockedOverrides() {
		fmt.Fprintf(w, "  %s = %s (%s)\n", ce.Key, ce.Value, ce.Code)
	}
	return nil
}

// errUnavailable is what the payment provider answers, every time.
var errUnavailable = errors.New("provider unavailable")

// flaky returns a function that always fails, and prints each attempt.
func flaky(w io.Writer, name string) func(context.Context) (string, error) {
	n := 0
	return func(context.Context) (string, error) {
		n++
		fmt.Fprintf(w, "  %s attempt %d\n", name, n)
		return "", errUnavailable
	}
}
