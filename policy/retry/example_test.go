package retry_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/retry"
)

func ExampleNew() {
	clk := clock.NewManual() // waits pass on the manual clock at once
	r, err := retry.New(
		retry.MaxAttempts(4),
		retry.Delay(100*time.Millisecond),
		retry.Multiplier(2),
		retry.WithClock(clk),
		retry.OnEvent(func(e policy.Event) { fmt.Println(e) }),
	)
	if err != nil {
		panic(err)
	}
	errUnavailable := errors.New("unavailable")
	search := retry.NewPolicy[string](r).Decorate(func(ctx context.Context) (string, error) {
		fmt.Println("attempt at", clk.Now())
		if clk.Now() < 300*time.Millisecond {
			return "", errUnavailable
		}
		return "results for go", nil
	})

	fmt.Println(search(context.Background()))
	// Output:
	// attempt at 0s
	// RetryAttempt at=0s attempt=1 wait=100ms err=unavailable
	// attempt at 100ms
	// RetryAttempt at=100ms attempt=2 wait=200ms err=unavailable
	// attempt at 300ms
	// results for go <nil>
}
