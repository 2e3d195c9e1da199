package main

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/resilience"
)

// The price service's policies: a hedge after quoteHedgeDelay (2 attempts in all), a
// timeout of quoteTimeout on each attempt, and an adaptive limit on the attempts in
// flight.
const (
	quoteHedgeDelay = 50 * time.Millisecond
	quoteTimeout    = 250 * time.Millisecond
)

// prices is the price service, simulated and asynchronous: answer says how each request
// is answered (held and entered aside), and the request's future completes after the
// reply's latency on clk, with a timer: no goroutine waits for it. Canceling the future
// stops the timer.
type prices struct {
	clk    clock.Clock
	answer func(sku string) reply
}

// Price returns the future of sku's price, in cents.
func (p *prices) Price(_ context.Context, sku string) *async.Future[int] {
	r := p.answer(sku)
	var t clock.Timer
	f, complete := async.NewCancelablePromise[int](func() bool {
		t.Stop() // a loser that the hedge cancels, or an attempt past its timeout
		return false
	})
	t = p.clk.AfterFunc(r.latency, func() {
		if r.err != nil {
			complete(0, r.err)
			return
		}
		complete(1999, nil)
	})
	return f
}

// newQuote wraps the price service's Price with a hedge, a timeout and an adaptive
// limit, composed by resilience.WrapAsync1 in the default order (the hedge outermost,
// the adaptive limit innermost), as the instance "prices".
func newQuote(reg *resilience.Registry, p *prices) (func(context.Context, string) *async.Future[int], error) {
	return resilience.WrapAsync1(reg, "prices", p.Price,
		resilience.Hedge(hedge.Delay(quoteHedgeDelay), hedge.MaxAttempts(2)),
		resilience.Timeout(quoteTimeout),
		resilience.AdaptiveLimit(adaptivelimit.InitialLimit(4), adaptivelimit.MinLimit(1), adaptivelimit.MaxLimit(20)),
	)
}

// livePrice is how the live price service answers a request: mostly within 10ms to
// 40ms, sometimes slow enough to be hedged, now and then past the timeout.
func livePrice() reply {
	switch n := rand.IntN(100); {
	case n < 5:
		return ok(time.Duration(300+rand.IntN(201)) * time.Millisecond) // past the timeout
	case n < 25:
		return ok(time.Duration(80+rand.IntN(121)) * time.Millisecond) // hedged
	default:
		return ok(time.Duration(10+rand.IntN(31)) * time.Millisecond)
	}
}
