package timeout_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/timeout"
)

// A search bounded by 500ms, on a manual clock: the slow query is cut off at its deadline.
func ExampleNew() {
	clk := clock.NewManual()
	to, err := timeout.New(500*time.Millisecond, timeout.WithClock(clk), timeout.Name("SearchAPI.Search"))
	if err != nil {
		panic(err)
	}
	search := timeout.DecorateFunc(to, func(ctx context.Context, q string) (string, error) {
		cost := 100 * time.Millisecond
		if q == "slow" {
			cost = 600 * time.Millisecond
		}
		if err := clk.Sleep(ctx, cost); err != nil { // the work, honouring ctx
			return "", err
		}
		if err := ctx.Err(); err != nil {
			return "", err
		}
		return "results for " + q, nil
	})

	fmt.Println(search(context.Background(), "fast"))
	_, err = search(context.Background(), "slow")
	fmt.Println(err)
	fmt.Println(errors.Is(err, timeout.ErrTimeout), errors.Is(err, context.DeadlineExceeded))
	fmt.Println("pending timers:", clk.PendingTasks())
	// Output:
	// results for fast <nil>
	// timeout: call to "SearchAPI.Search" timed out after 500ms
	// true true
	// pending timers: 0
}
