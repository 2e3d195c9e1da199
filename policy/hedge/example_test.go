package hedge_test

import (
	"context"
	"fmt"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/hedge"
)

// A replica that is slow to answer the first request is hedged after 200ms (on a manual
// clock here); the second request answers first and the first is canceled.
func ExampleDecorateAsyncFunc() {
	clk := clock.NewManual()
	h, err := hedge.New(hedge.Delay(200*time.Millisecond), hedge.WithClock(clk),
		hedge.Name("Search.Query"), hedge.OnEvent(func(e policy.Event) { fmt.Println(e) }))
	if err != nil {
		panic(err)
	}
	latency := []time.Duration{time.Second, 50 * time.Millisecond}
	attempt := 0
	query := hedge.DecorateAsyncFunc(h, func(ctx context.Context, q string) *async.Future[string] {
		d := latency[attempt]
		attempt++
		f, complete := async.NewPromise[string]()
		timer := clk.AfterFunc(d, func() { complete(fmt.Sprintf("%q after %v", q, d), nil) })
		context.AfterFunc(ctx, func() { timer.Stop() }) // a canceled attempt stops
		return f
	})

	f := query(context.Background(), "go")
	clk.Advance(time.Second)
	fmt.Println(f.Result())
	s := h.Snapshot()
	fmt.Printf("%s: calls=%d hedges=%d budget=%d delay=%v maxAttempts=%d\n",
		s.Instance, s.Calls, s.Hedges, s.BudgetAvailable, s.Delay, s.MaxAttempts)
	// Output:
	// Hedged Search.Query at=200ms attempt=2 wait=200ms
	// HedgeWon Search.Query at=250ms attempt=2
	// "go" after 50ms true <nil>
	// Search.Query: calls=1 hedges=1 budget=9 delay=200ms maxAttempts=2
}

// A synchronous function is hedged by running each attempt with async.Go, and awaiting
// the call's future.
func ExampleDecorateAsyncFunc_synchronous() {
	h, err := hedge.New(hedge.Delay(50 * time.Millisecond))
	if err != nil {
		panic(err)
	}
	lookup := func(_ context.Context, key string) (string, error) { return "value of " + key, nil }
	hedged := hedge.DecorateAsyncFunc(h, func(ctx context.Context, key string) *async.Future[string] {
		return async.Go(ctx, func(ctx context.Context) (string, error) { return lookup(ctx, key) })
	})
	fmt.Println(hedged(context.Background(), "k").Await(context.Background()))
	// Output:
	// value of k <nil>
}
