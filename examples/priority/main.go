// Command priority shares a bulkhead of 4 slots between batch jobs, which are sheddable,
// and user requests and a health check, which are not, on a manual clock. Sheddable
// calls may take 2 of the 4 slots (the default PriorityReserve, 0.5, keeps the other
// half for critical calls); a user request takes a free slot past the batch job that
// waits; a slot that comes free goes to the waiting user request first; the batch job
// still waiting when its MaxWait passes is shed for its priority.
//
//	go run ./examples/priority
//
// It runs on a manual clock, so its output is the same on every run.
package main

import (
	"context"
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
		fmt.Fprintln(os.Stderr, "priority:", err)
		os.Exit(1)
	}
}

// job is a call to the backend: its name, its priority and how long it takes.
type job struct {
	name     string
	priority policy.Priority
	d        time.Duration
}

func run(ctx context.Context, w io.Writer) error {
	clk := clock.NewManual() // clock.System() in production: leave WithClock out
	reg, err := resilience.NewRegistry(resilience.WithClock(clk),
		resilience.WithEventListener(func(e policy.Event) {
			fmt.Fprintf(w, "%6v   event %v\n", clk.Now(), e)
		}))
	if err != nil {
		return err
	}
	// work is the backend: a job takes as long as it says, on the manual clock.
	work := func(ctx context.Context, j job) *async.Future[string] {
		fmt.Fprintf(w, "%6v %s starts (%v)\n", clk.Now(), j.name, policy.PriorityFrom(ctx))
		f, complete := async.NewPromise[string]()
		clk.AfterFunc(j.d, func() { complete(j.name+" done", nil) })
		return f
	}

	// README:begin priority
	call, err := resilience.WrapAsync1(reg, "Backend.Work", work,
		resilience.Bulkhead(
			bulkhead.Name("Backend"),
			bulkhead.MaxConcurrent(4),               // sheddable calls may take 2 of them
			bulkhead.MaxWait(200*time.Millisecond))) // the others wait up to 200ms
	if err != nil {
		return err
	}
	for _, j := range []job{
		{"batch A", policy.PrioritySheddable, time.Second},
		{"batch B", policy.PrioritySheddable, time.Second},
		{"batch C", policy.PrioritySheddable, time.Second},             // waits: 2 sheddable in flight
		{"user 1", policy.PriorityCritical, 150 * time.Millisecond},    // starts past batch C
		{"health", policy.PriorityCriticalPlus, 50 * time.Millisecond}, // the 4th slot
		{"user 2", policy.PriorityCritical, 100 * time.Millisecond},    // waits, ahead of batch C
	} {
		// A server sets the priority once per request, e.g. from a header.
		call(policy.WithPriority(ctx, j.priority), j).OnComplete(func(got string, err error) {
			fmt.Fprintf(w, "%6v %s: %q %v\n", clk.Now(), j.name, got, err)
		})
	}
	// README:end priority
	clk.Advance(2 * time.Second)
	b, err := resilience.Lookup[*bulkhead.Bulkhead](reg, bulkhead.Layer, "Backend")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "shed by priority (sheddable first): %v\n", b.Snapshot().Shed)
	return nil
}
