package circuitbreaker_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
)

func ExampleNew() {
	clk := clock.NewManual()
	breaker, _ := circuitbreaker.New(
		circuitbreaker.Name("inventory"),
		circuitbreaker.WithClock(clk),
		circuitbreaker.SlidingWindowSize(4),     // the last 4 calls
		circuitbreaker.MinimumCalls(4),          // count from 4 calls on
		circuitbreaker.FailureRateThreshold(50), // open at 50% failures
		circuitbreaker.WaitInOpen(30*time.Second),
		circuitbreaker.PermittedInHalfOpen(2),
		circuitbreaker.OnEvent(func(e policy.Event) {
			if e.Kind == circuitbreaker.EventTransition {
				fmt.Printf("%s: %s → %s at %v\n", e.Instance, e.Attr("from").String(), e.Attr("to").String(), e.At)
			}
		}),
	)

	down := true
	lookup := circuitbreaker.NewPolicy[int](breaker).Decorate(func(ctx context.Context) (int, error) {
		if down {
			return 0, errors.New("inventory unavailable")
		}
		return 7, nil
	})
	ctx := context.Background()

	for range 4 {
		_, _ = lookup(ctx) // 4 failures of 4: the breaker opens
	}
	_, err := lookup(ctx)
	fmt.Println(errors.Is(err, circuitbreaker.ErrOpen), err)

	down = false
	clk.Advance(30 * time.Second) // the next call finds the wait over
	for range 2 {
		n, err := lookup(ctx) // two good trial calls close it
		fmt.Println(n, err)
	}
	fmt.Println(breaker.Snapshot().State)

	// Output:
	// inventory: closed → open at 0s
	// true circuitbreaker: circuit breaker "inventory" is open and does not permit the call
	// inventory: open → half-open at 30s
	// 7 <nil>
	// inventory: half-open → closed at 30s
	// 7 <nil>
	// closed
}
