package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/resilience4go/resilience4go/clock"
)

// The live inventory's cycle, in serve mode: healthy, then down, then slow, then healthy
// again.
const (
	cycle     = 2 * time.Minute
	downFrom  = 60 * time.Second // the outage: every request fails after 150ms
	slowFrom  = 75 * time.Second // slow: 200ms to 600ms, which fills the bulkhead
	healthyAt = 95 * time.Second
)

// serve serves /metrics at cfg.addr on the real clock, under a background load of about
// 12 calls per second, and as many quotes, until ctx ends; events of level Warn and above are logged to
// cfg.log.
func serve(ctx context.Context, w io.Writer, cfg config) error {
	clk := clock.System()
	tel, err := newTelemetry(clk, logger(cfg.log))
	if err != nil {
		return err
	}
	defer func() { _ = tel.close() }()
	start := clk.Now()
	lookup, err := newLookup(tel.registry, &inventory{clk: clk, answer: func(string) reply {
		return live(clk.Now() - start)
	}})
	if err != nil {
		return err
	}
	quote, err := newQuote(tel.registry, &prices{clk: clk, answer: func(string) reply { return livePrice() }})
	if err != nil {
		return err
	}
	url, stop, err := listen(cmp.Or(cfg.addr, serveAddr), tel.handler)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Fprintf(w, "serving %s: about 12 calls and 12 quotes per second; every %v the inventory is down from %v to %v, then slow until %v; Ctrl-C to stop\n",
		url, cycle, downFrom, slowFrom, healthyAt)

	var calls sync.WaitGroup
	defer calls.Wait() // before the server stops and the metrics close
	for n := 1; ; n++ {
		// One call every 40ms to 120ms: about 12.5 per second, above the rate limiter's 10.
		if clk.Sleep(ctx, time.Duration(40+rand.IntN(81))*time.Millisecond) != nil {
			fmt.Fprintln(w, "stopped")
			return nil
		}
		sku := "sku-" + strconv.Itoa(n)
		calls.Go(func() { _, _ = lookup(ctx, sku) })
		calls.Go(func() { <-quote(ctx, sku).Done() }) // the hedge ends it when ctx ends
	}
}

// live is how the live inventory answers a request, elapsed after the start.
func live(elapsed time.Duration) reply {
	switch at := elapsed % cycle; {
	case at >= downFrom && at < slowFrom:
		return fail(150 * time.Millisecond)
	case at >= slowFrom && at < healthyAt:
		return ok(time.Duration(200+rand.IntN(401)) * time.Millisecond)
	case rand.IntN(100) < 3: // a transient error now and then, which the retry absorbs
		return fail(10 * time.Millisecond)
	default:
		return ok(time.Duration(20+rand.IntN(61)) * time.Millisecond)
	}
}

// logger logs to w the records of level Warn and above, as text; nil when w is nil.
func logger(w io.Writer) *slog.Logger {
	if w == nil {
		return nil
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
