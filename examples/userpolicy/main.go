// Command userpolicy adds a policy of its own to a composition: a counter that counts the
// calls that reach its place in the layers. Two counters show where a layer sits: one
// named outside the retry counts calls, one named inside it counts attempts. A rate
// limiter, inside both, rejects the attempts beyond its quota, and the fallback, always
// outermost, turns what is left into a value.
//
//	go run ./examples/userpolicy
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// Counter is a user's policy: it counts the calls that reach it, and lets them through.
// It implements policy.Policy[T] for any result type T.
type Counter[T any] struct {
	layer policy.Layer
	n     atomic.Int64
}

// NewCounter returns a counter at the layer named name.
func NewCounter[T any](name string) *Counter[T] { return &Counter[T]{layer: policy.Layer(name)} }

// Layer names the counter's place in a composition.
func (c *Counter[T]) Layer() policy.Layer { return c.layer }

// Decorate counts each call, then makes it.
func (c *Counter[T]) Decorate(next policy.Call[T]) policy.Call[T] {
	return func(ctx context.Context) (T, error) {
		c.n.Add(1)
		return next(ctx)
	}
}

// DecorateAsync counts each call, then makes it.
func (c *Counter[T]) DecorateAsync(next policy.AsyncCall[T]) policy.AsyncCall[T] {
	return func(ctx context.Context) *async.Future[T] {
		c.n.Add(1)
		return next(ctx)
	}
}

// Count returns how many calls reached the counter.
func (c *Counter[T]) Count() int64 { return c.n.Load() }

func run(ctx context.Context, w io.Writer) error {
	clk := clock.NewManual() // time moves only when we say so; use clock.System() in production
	reg, err := resilience.NewRegistry(resilience.WithClock(clk))
	if err != nil {
		return err
	}
	// README:begin use
	calls, attempts := NewCounter[string]("calls"), NewCounter[string]("attempts")
	search, err := resilience.Wrap1(reg, "SearchAPI.Search",
		func(ctx context.Context, q string) (string, error) { return "results for " + q, nil },
		resilience.Use[string](calls),
		resilience.Use[string](attempts),
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(10*time.Millisecond)),
		resilience.RateLimiter(ratelimit.Permits(4), ratelimit.Period(time.Hour)),
		resilience.Fallback(func(ctx context.Context, err error) (string, error) { return "no results", nil }),
		// Outermost first; the fallback stays outermost, the limiter keeps its default
		// place, inside the named layers.
		resilience.Order("calls", retry.Layer, "attempts"))
	// README:end use
	if err != nil {
		return err
	}
	for _, q := range []string{"a", "b", "c", "d", "e", "f"} {
		v, err := search(ctx, q)
		fmt.Fprintf(w, "%s: %s %v\n", q, v, err)
	}
	fmt.Fprintf(w, "calls %d, attempts %d\n", calls.Count(), attempts.Count())
	return nil
}
