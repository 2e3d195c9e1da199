// Command hedge hedges calls to a price service whose replicas are sometimes slow: when
// an attempt has no answer after 200ms, a second one starts beside it, and the first
// answer wins; the loser is canceled, so its bulkhead slot is free at once and the
// breaker records nothing for it. A replica that answers "overloaded" is hedged at once.
// The hedge budget keeps hedges to 10% of the calls (at least 1 per second): when every
// call is slow, most hedges are skipped instead of doubling the load.
//
//	go run ./examples/hedge
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
	"github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/resilience"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "hedge:", err)
		os.Exit(1)
	}
}

// errOverloaded is a replica's answer when it sheds load: worth asking another at once.
var errOverloaded = errors.New("replica overloaded")

// replica is how one attempt of the price service goes: after latency, it answers or
// fails with err.
type replica struct {
	latency time.Duration
	err     error
}

func run(ctx context.Context, w io.Writer) error {
	clk := clock.NewManual()
	verbose := true // print events and canceled attempts
	hedged, skipped := 0, 0
	reg, err := resilience.NewRegistry(
		resilience.WithClock(clk),
		resilience.WithEventListener(func(e policy.Event) {
			switch {
			case e.Kind == hedge.EventHedged:
				hedged++
			case e.Kind == hedge.EventSkipped:
				skipped++
			}
			if verbose {
				fmt.Fprintf(w, "%7v   event %v\n", clk.Now(), e)
			}
		}))
	if err != nil {
		return err
	}

	// plans holds, per item asked for, how each of its attempts goes.
	plans := map[string][]replica{}
	attempts := map[string]int{}
	priceAsync := func(ctx context.Context, item string) *async.Future[string] {
		n := attempts[item] + 1
		attempts[item] = n
		r := plans[item][n-1]
		var t clock.Timer
		f, complete := async.NewCancelablePromise[string](func() bool {
			if t.Stop() && verbose { // a loser, canceled by the hedge
				fmt.Fprintf(w, "%7v   %s: attempt %d canceled\n", clk.Now(), item, n)
			}
			return false
		})
		t = clk.AfterFunc(r.latency, func() {
			if r.err != nil {
				complete("", r.err)
				return
			}
			complete(fmt.Sprintf("%s: 42.00 (attempt %d)", item, n), nil)
		})
		return f
	}

	// README:begin hedge
	price, err := resilience.WrapAsync1(reg, "PriceService.Price", priceAsync,
		resilience.Hedge(
			hedge.Delay(200*time.Millisecond),
			hedge.MaxAttempts(2),
			hedge.On(errOverloaded)),
		resilience.CircuitBreaker(),
		resilience.Bulkhead(bulkhead.MaxConcurrent(50)))
	// README:end hedge
	if err != nil {
		return err
	}
	bh, err := resilience.Lookup[*bulkhead.Bulkhead](reg, bulkhead.Layer, "PriceService.Price")
	if err != nil {
		return err
	}
	h, err := resilience.Lookup[*hedge.Hedge](reg, hedge.Layer, "PriceService.Price")
	if err != nil {
		return err
	}

	do := func(title, item string, attempts ...replica) {
		fmt.Fprintf(w, "-- %s\n", title)
		plans[item] = attempts
		start := clk.Now()
		f := price(ctx, item)
		for {
			if v, done, err := f.Result(); done {
				fmt.Fprintf(w, "%7v   result after %v: %q %v, free bulkhead slots %d\n",
					clk.Now(), clk.Now()-start, v, err, bh.Snapshot().AvailableSlots)
				return
			}
			clk.Advance(10 * time.Millisecond)
		}
	}
	do("a fast replica: no hedge", "book", replica{latency: 30 * time.Millisecond})
	do("a slow replica (3s): a hedge at 200ms answers in 30ms", "pen",
		replica{latency: 3 * time.Second}, replica{latency: 30 * time.Millisecond})
	do("an overloaded replica: hedged at once", "ink",
		replica{latency: 10 * time.Millisecond, err: errOverloaded}, replica{latency: 30 * time.Millisecond})

	fmt.Fprintln(w, "-- 20 slow calls at once: the budget allows few hedges")
	verbose = false
	hedged, skipped = 0, 0
	slow := replica{latency: 300 * time.Millisecond}
	futures := make([]*async.Future[string], 20)
	for i := range futures {
		item := fmt.Sprint("lamp ", i+1)
		plans[item] = []replica{slow, slow}
		futures[i] = price(ctx, item)
	}
	clk.Advance(time.Second)
	ok := 0
	for _, f := range futures {
		if _, done, err := f.Result(); done && err == nil {
			ok++
		}
	}
	s := h.Snapshot()
	fmt.Fprintf(w, "%7v   %d of 20 answered; %d hedges started, %d skipped; the budget's window holds %d calls and %d hedges\n",
		clk.Now(), ok, hedged, skipped, s.Calls, s.Hedges)
	return nil
}
