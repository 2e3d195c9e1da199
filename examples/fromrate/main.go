// Command fromrate sets golang.org/x/time/rate and resilience4go's rate limiter side by
// side, on one timeline, for a reader moving from one to the other: the same quota
// admits the same calls, a burst that differs from the rate is a shorter period, Wait
// becomes Acquire with MaxWait, and a refused Reserve says when to come back. Both run on
// time the program moves (rate's ...N(t, n) methods and a manual clock), so the output is
// the same on every run.
//
//	go run ./examples/fromrate
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/time/rate"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fromrate:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer) error {
	clk := clock.NewManual()
	t0 := time.Now()
	now := func() time.Time { return t0.Add(clk.Now()) } // x/time/rate's view of the manual clock

	// README:begin same-quota
	// x/time/rate: 10 tokens per second, a bucket of 10.
	peer := rate.NewLimiter(rate.Limit(10), 10)
	// resilience4go: 10 permits per second; the burst is the permits.
	ours, err := ratelimit.New(ratelimit.Permits(10), ratelimit.Period(time.Second),
		ratelimit.WithClock(clk)) // leave out for the system clock
	if err != nil {
		return err
	}
	// README:end same-quota
	// README:begin other-burst
	// x/time/rate: 10 per second with a bucket of 5. Here the burst is the permits, and the
	// rate is permits per period: 5 permits per 500ms.
	peerSmall := rate.NewLimiter(rate.Limit(10), 5)
	oursSmall, err := ratelimit.New(ratelimit.Permits(5), ratelimit.Period(500*time.Millisecond),
		ratelimit.WithClock(clk))
	if err != nil {
		return err
	}
	// README:end other-burst

	// Allow is TryAcquire: a permit now, or false.
	count := func(n int, allow func() bool) int {
		admitted := 0
		for range n {
			if allow() {
				admitted++
			}
		}
		return admitted
	}
	step := func(what string, n int) {
		fmt.Fprintf(w, "%-28s x/time/rate %2d, resilience4go %2d | bucket of 5: %d, %d\n", what,
			count(n, func() bool { return peer.AllowN(now(), 1) }), count(n, ours.TryAcquire),
			count(n, func() bool { return peerSmall.AllowN(now(), 1) }), count(n, oursSmall.TryAcquire))
	}
	step("at 0s, 15 calls:", 15)
	clk.Advance(100 * time.Millisecond)
	step("100ms later, 3 calls:", 3)
	clk.Advance(350 * time.Millisecond)
	step("350ms later, 5 calls:", 5)
	clk.Advance(2 * time.Second)
	step("after 2s idle, 15 calls:", 15)

	// README:begin reserve
	// x/time/rate's Reserve always reserves (r.OK() is false only beyond the bucket), and
	// its Delay may be long. Ours reserves only within MaxWait: beyond, it returns the
	// rejection, and a refused Reservation whose Delay is the retry-after.
	r, err := ours.Reserve()
	if err != nil {
		fmt.Fprintf(w, "Reserve: %v; retry after %v\n", err, r.Delay())
	}
	// README:end reserve
	pr := peer.ReserveN(now(), 1)
	fmt.Fprintf(w, "x/time/rate's ReserveN: OK %v, delay %v\n", pr.OK(), pr.DelayFrom(now()))
	// README:begin wait
	// lim.Wait(ctx) waits as long as ctx allows. Acquire waits up to MaxWait, and honours
	// ctx too; with the default MaxWait of 0 it never waits.
	waiting, err := ratelimit.New(ratelimit.Permits(10), ratelimit.Period(time.Second),
		ratelimit.MaxWait(time.Second), ratelimit.WithClock(clk))
	if err != nil {
		return err
	}
	// README:end wait
	waiting.TryAcquireN(10)
	start := clk.Now()
	err = waiting.Acquire(ctx) // the manual clock moves instead of sleeping
	fmt.Fprintf(w, "Acquire with the burst spent: err %v, after %v\n", err, clk.Now()-start)

	return nil
}
