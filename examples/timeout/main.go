// Command timeout bounds calls to a search backend that sometimes hangs, on a manual
// clock: a call that answers within 2s is returned as is; one that would take 5s has its
// context ended at 2s and fails with an error matching timeout.ErrTimeout (and
// context.DeadlineExceeded). The backend honours its context, as a function must for a
// timeout to cut it short.
//
//	go run ./examples/timeout
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

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/resilience"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "timeout:", err)
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
	latency := map[string]time.Duration{"books": 300 * time.Millisecond, "lamps": 5 * time.Second}
	// search works through its query in steps of 100ms (on the manual clock, whose Sleep
	// advances it), and stops with its context's error when its context ends.
	search := func(ctx context.Context, q string) (string, error) {
		for spent := time.Duration(0); spent < latency[q]; spent += 100 * time.Millisecond {
			if err := clk.Sleep(ctx, 100*time.Millisecond); err != nil {
				return "", err
			}
		}
		return "results for " + q, nil
	}

	// README:begin timeout
	bounded, err := resilience.Wrap1(reg, "Search.Query", search,
		resilience.Timeout(2*time.Second)) // the key timeout.duration overrides it
	if err != nil {
		return err // a *policy.ConfigError with its R4C code
	}
	for _, q := range []string{"books", "lamps"} {
		start := clk.Now()
		got, err := bounded(ctx, q)
		fmt.Fprintf(w, "%7v %q %v (after %v; timed out: %v, deadline exceeded: %v)\n",
			clk.Now(), got, err, clk.Now()-start,
			errors.Is(err, timeout.ErrTimeout), errors.Is(err, context.DeadlineExceeded))
	}
	// README:end timeout
	return nil
}
