package adaptivelimit_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
)

// A limit for calls to a database, moved by AIMD: a call slower than 100ms, or one that
// misses its deadline, is a drop, which halves the limit; calls over the limit are
// rejected at once (on a manual clock here).
func ExampleNew() {
	clk := clock.NewManual()
	l, err := adaptivelimit.New(adaptivelimit.UseAlgorithm(adaptivelimit.AIMD), adaptivelimit.InitialLimit(4),
		adaptivelimit.BackoffRatio(0.5), adaptivelimit.LatencyThreshold(100*time.Millisecond),
		adaptivelimit.WithClock(clk), adaptivelimit.WithInstanceID("DB.Query"),
		adaptivelimit.OnEvent(func(e policy.Event) { fmt.Println(e) }))
	if err != nil {
		panic(err)
	}
	query := adaptivelimit.DecorateFunc(l, func(_ context.Context, d time.Duration) (string, error) {
		clk.Advance(d) // the query takes d
		return "rows", nil
	})

	ctx := context.Background()
	fmt.Println(query(ctx, 20*time.Millisecond)) // one call in flight under a limit of 4: app-limited
	fmt.Println(query(ctx, 150*time.Millisecond))
	fmt.Printf("%+v\n", l.Snapshot())

	// Four calls in flight under a limit of 2: the two beyond it are rejected.
	var held []adaptivelimit.Permit
	for range 4 {
		p, err := l.Acquire(ctx)
		if errors.Is(err, adaptivelimit.ErrLimitExceeded) {
			continue
		}
		held = append(held, p)
	}
	for _, p := range held {
		p.Record(nil)
	}
	// Output:
	// rows <nil>
	// AdaptiveLimitChanged DB.Query at=170ms limit=2 previous_limit=4
	// rows <nil>
	// {Instance:DB.Query Algorithm:aimd Limit:2 InFlight:0 Queued:0 Latency:150ms Baseline:0s MinLimit:1 MaxLimit:200}
	// AdaptiveLimitRejected DB.Query at=170ms err=adaptivelimit: concurrency limit of "DB.Query" exceeded
	// AdaptiveLimitRejected DB.Query at=170ms err=adaptivelimit: concurrency limit of "DB.Query" exceeded
	// AdaptiveLimitChanged DB.Query at=170ms limit=3 previous_limit=2
}
