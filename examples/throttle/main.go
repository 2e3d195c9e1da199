// Command throttle sheds, on the client, the calls an overloaded inventory service would
// refuse: the service answers at most 5 calls a second (the others get a 429) for the
// first 20 seconds, and every call after that; the client offers 20 calls a second. With
// a throttle of K 2 in front of it, the client soon sends about 2 calls for each one the
// service accepts, rejecting the rest locally with throttle.ErrThrottled, and stops
// throttling once the service accepts again.
//
//	go run ./examples/throttle
//
// It runs on a manual clock with a seeded random source, so its output is the same on
// every run.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/throttle"
	"github.com/resilience4go/resilience4go/resilience"
)

// errTooManyRequests is the service's answer when it is over its capacity.
var errTooManyRequests = errors.New("inventory: 429 Too Many Requests")

const (
	offered  = 20 // calls a second the client makes
	capacity = 5  // calls a second the service accepts while overloaded
	overload = 20 * time.Second
	runFor   = 36 * time.Second
	report   = 4 * time.Second // one line of output per 4 seconds
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "throttle:", err)
		os.Exit(1)
	}
}

// counts are what one line of output reports.
type counts struct{ sent, accepted, throttled int }

func run(ctx context.Context, w io.Writer) error {
	clk := clock.NewManual() // clock.System() in production: leave WithClock out
	reg, err := resilience.NewRegistry(resilience.WithClock(clk))
	if err != nil {
		return err
	}
	var c counts
	acceptedThisSecond, second := 0, time.Duration(-1)
	// stock asks the inventory service, which accepts capacity calls a second while it
	// is overloaded.
	stock := func(ctx context.Context, item string) (int, error) {
		c.sent++
		if now := clk.Now().Truncate(time.Second); now != second {
			second, acceptedThisSecond = now, 0
		}
		if clk.Now() < overload && acceptedThisSecond == capacity {
			return 0, errTooManyRequests
		}
		acceptedThisSecond++
		c.accepted++
		return 7, nil
	}

	// README:begin throttle
	get, err := resilience.Wrap1(reg, "Inventory.Stock", stock,
		resilience.Throttle(
			throttle.RefusedOn(errTooManyRequests),    // only the service's 429s are refusals
			throttle.Window(10*time.Second),           // counted over the last 10s
			throttle.RandomSource(rand.NewPCG(1, 2)))) // seeded for a repeatable run; leave it out
	if err != nil {
		return err // a *policy.ConfigError with its R4C code
	}
	// README:end throttle
	th, err := resilience.Lookup[*throttle.Throttle](reg, throttle.Layer, "Inventory.Stock")
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "   time    sent accepted throttled  window: requests accepts p(reject)")
	for clk.Now() < runFor {
		from := clk.Now()
		c = counts{}
		for clk.Now() < from+report {
			if _, err := get(ctx, "sku-42"); errors.Is(err, throttle.ErrThrottled) {
				c.throttled++
			}
			clk.Advance(time.Second / offered)
		}
		s := th.Snapshot()
		fmt.Fprintf(w, "%3.0fs-%2.0fs %6d %8d %9d  %16d %7d %9.2f\n", from.Seconds(), clk.Now().Seconds(),
			c.sent, c.accepted, c.throttled, s.Requests, s.Accepts, s.Probability)
	}
	return nil
}
