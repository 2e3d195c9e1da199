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
		adaptivelimit.WithClock(clk), adaptivelimit.Name("DB.Query"),
		adaptivelimit.OnEvent(func(e policy.Event) { fmt.Println(e) }))
	if err != nil {
		panic(err)
	}
	var took time.Duration // how long the next query takes
	query := adaptivelimit.NewPolicy[string](l).Decorate(func(context.Context) (string, error) {
		clk.Advance(took)
		return "rows", nil
	})

	ctx := context.Background()
	took = 20 * time.Millisecond
	fmt.Println(query(ctx)) // one call in flight under a limit of 4: app-limited
	took = 150 * time.Millisecond
	fmt.Println(query(ctx))
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
	// {Instance:DB.Query Algorithm:aimd Limit:2 InFlight:0 Queued:0 Latency:150ms Baseline:0s MinLimit:1 MaxLimit:200 Shed:[0 0 0 0] ShadowRejected:0}
	// AdaptiveLimitRejected DB.Query at=170ms err=adaptivelimit: concurrency limit of "DB.Query" exceeded
	// AdaptiveLimitRejected DB.Query at=170ms err=adaptivelimit: concurrency limit of "DB.Query" exceeded
	// AdaptiveLimitChanged DB.Query at=170ms limit=3 previous_limit=2
}
