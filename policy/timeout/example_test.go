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
	p := timeout.NewPolicy[string](to)
	search := func(q string, cost time.Duration) (string, error) {
		return p.Decorate(func(ctx context.Context) (string, error) {
			if err := clk.Sleep(ctx, cost); err != nil { // the work, honouring ctx
				return "", err
			}
			if err := ctx.Err(); err != nil {
				return "", err
			}
			return "results for " + q, nil
		})(context.Background())
	}

	fmt.Println(search("fast", 100*time.Millisecond))
	_, err = search("slow", 600*time.Millisecond)
	fmt.Println(err)
	fmt.Println(errors.Is(err, timeout.ErrTimeout), errors.Is(err, context.DeadlineExceeded))
	fmt.Println("pending timers:", clk.PendingTasks())
	// Output:
	// results for fast <nil>
	// timeout: call to "SearchAPI.Search" timed out after 500ms
	// true true
	// pending timers: 0
}
