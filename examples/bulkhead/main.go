// Command bulkhead keeps at most 2 calls in flight to a report service, on a manual
// clock: the calls that find both slots taken queue for up to 500ms, in arrival order;
// a call that gets a slot within that time starts then, and one that does not fails with
// a rejection matching bulkhead.ErrFull. The calls return futures, so a queued call is a
// callback, not a goroutine.
//
//	go run ./examples/bulkhead
//
// It runs on a manual clock, so its output is the same on every run.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/resilience"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bulkhead:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer) error {
	clk := clock.NewManual() // clock.System() in production: leave WithClock out
	reg, err := resilience.NewRegistry(resilience.WithClock(clk),
		resilience.WithEventListener(func(e policy.Event) {
			fmt.Fprintf(w, "%7v   event %v\n", clk.Now(), e)
		}))
	if err != nil {
		return err
	}
	// render makes a report, which takes as long as its name says, on the manual clock.
	render := func(ctx context.Context, d time.Duration) *async.Future[string] {
		fmt.Fprintf(w, "%7v %v report starts\n", clk.Now(), d)
		f, complete := async.NewPromise[string]()
		clk.AfterFunc(d, func() { complete(fmt.Sprintf("%v report", d), nil) })
		return f
	}

	// README:begin bulkhead
	report, err := resilience.WrapAsync1(reg, "Reports.Render", render,
		resilience.Bulkhead(
			bulkhead.MaxConcurrent(2),               // 2 calls in flight at most
			bulkhead.MaxWait(500*time.Millisecond))) // the others wait up to 500ms for a slot
	if err != nil {
		return err // a *policy.ConfigError with its R4C code
	}
	for _, d := range []time.Duration{300 * time.Millisecond, 2 * time.Second, 2 * time.Second, time.Second} {
		report(ctx, d).OnComplete(func(got string, err error) {
			fmt.Fprintf(w, "%7v %q %v (full: %v)\n", clk.Now(), got, err, errors.Is(err, bulkhead.ErrFull))
		})
	}
	// README:end bulkhead
	clk.Advance(3 * time.Second)
	return nil
}
