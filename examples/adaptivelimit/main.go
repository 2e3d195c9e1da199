// Command adaptivelimit puts an adaptive concurrency limit in front of a dependency that
// slows down when it is given too much at once: it answers in 10ms while at most 20 calls
// are in flight, and 10ms later for each call above 20. 100 callers call it without a
// pause. The limit (Vegas, the default) finds the dependency's capacity, about 20, and
// the calls over it wait in the limit's queue instead of slowing everyone down. Then the
// dependency becomes fast at any load, and the limit climbs.
//
//	go run ./examples/adaptivelimit
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
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "adaptivelimit:", err)
		os.Exit(1)
	}
}

const (
	callers  = 100
	capacity = 20 // calls in flight the dependency takes without slowing down
	base     = 10 * time.Millisecond
)

func run(ctx context.Context, w io.Writer) error {
	clk := clock.NewManual()
	reg, err := resilience.NewRegistry(resilience.WithClock(clk))
	if err != nil {
		return err
	}

	var limit *adaptivelimit.Limiter
	slow := true
	inFlight, most := 0, 0
	// query is the dependency: its latency is fixed when a call starts, from the calls in
	// flight then.
	query := func(ctx context.Context) *async.Future[int] {
		inFlight++
		most = max(most, inFlight)
		latency := base
		if slow && inFlight > capacity {
			latency += time.Duration(inFlight-capacity) * base
		}
		f, complete := async.NewPromise[int]()
		clk.AfterFunc(latency, func() {
			inFlight--
			complete(1, nil)
		})
		return f
	}

	// README:begin adaptivelimit
	// Start well above the dependency's capacity, and queue what does not fit.
	call, err := resilience.WrapAsync(reg, "Inventory.Query", query,
		resilience.AdaptiveLimit(
			adaptivelimit.InitialLimit(60),
			adaptivelimit.MaxWait(time.Minute)))
	// README:end adaptivelimit
	if err != nil {
		return err
	}
	if limit, err = resilience.Lookup[*adaptivelimit.Limiter](reg, adaptivelimit.Layer, "Inventory.Query"); err != nil {
		return err
	}

	done := 0
	var loop func()
	loop = func() {
		call(ctx).OnComplete(func(int, error) {
			done++
			loop()
		})
	}
	for range callers {
		loop()
	}
	report := func(phase string, calls int) {
		start, from := done, clk.Now()
		most = 0
		for done < start+calls {
			clk.Advance(time.Millisecond)
		}
		s, n, took := limit.Snapshot(), done-start, clk.Now()-from
		fmt.Fprintf(w, "%-4s calls %4d-%4d in %6v: %5.0f calls/s, limit %3d, most in flight %3d, queued %2d\n",
			phase, start+1, done, took, float64(n)/took.Seconds(), s.Limit, most, s.Queued)
	}
	fmt.Fprintf(w, "the dependency takes %v up to %d calls in flight, %v more per call above; %d callers\n",
		base, capacity, base, callers)
	for range 4 {
		report("slow", 500)
	}
	slow = false
	fmt.Fprintln(w, "the dependency is fast at any load")
	for range 4 {
		report("fast", 500)
	}
	return nil
}
