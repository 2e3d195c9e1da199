package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// A burst of 10, then one permit every 100ms.
func ExampleLimiter_TryAcquire() {
	clk := clock.NewManual()
	l, _ := ratelimit.New(ratelimit.Permits(10), ratelimit.Period(time.Second), ratelimit.WithClock(clk))
	passed := 0
	for range 11 {
		if l.TryAcquire() {
			passed++
		}
	}
	fmt.Println("passed at once:", passed)
	clk.Advance(100 * time.Millisecond)
	fmt.Println("100ms later:", l.TryAcquire(), l.TryAcquire())
	// Output:
	// passed at once: 10
	// 100ms later: true false
}

// With maxWait, a call reserves the next permit and waits for it; one that would wait too
// long is refused at once, and learns when to retry.
func ExampleLimiter_Reserve() {
	clk := clock.NewManual()
	l, _ := ratelimit.New(ratelimit.Permits(5), ratelimit.Period(time.Second),
		ratelimit.MaxWait(500*time.Millisecond), ratelimit.WithClock(clk))
	for range 5 {
		_, _ = l.Reserve()
	}
	for range 3 {
		r, err := l.Reserve()
		fmt.Println(r.Delay(), err)
	}
	// Output:
	// 200ms <nil>
	// 400ms <nil>
	// 600ms ratelimit: rate limit exceeded
}

// Acquire waits for its permit on the caller's goroutine; on a manual clock the wait
// advances the clock instead of blocking.
func ExampleLimiter_Acquire() {
	clk := clock.NewManual()
	l, _ := ratelimit.New(ratelimit.Permits(1), ratelimit.Period(time.Second),
		ratelimit.MaxWait(2*time.Second), ratelimit.WithClock(clk), ratelimit.Name("api"))
	ctx := context.Background()
	fmt.Println(l.Acquire(ctx), clk.Now())
	fmt.Println(l.Acquire(ctx), clk.Now())
	fmt.Printf("%+v\n", l.Snapshot())
	// Output:
	// <nil> 0s
	// <nil> 1s
	// {Instance:api AvailablePermits:0 Permits:1 Waiting:0 ShadowRejected:0}
}

// To wait for a permit as long as the context allows, set MaxWait to the largest
// duration: a call then waits for its turn, unless its context's deadline comes first,
// in which case it is refused at once and reserves nothing.
func ExampleLimiter_Acquire_asLongAsTheContextAllows() {
	clk := clock.NewManual()
	l, _ := ratelimit.New(ratelimit.Permits(1), ratelimit.Period(time.Minute),
		ratelimit.MaxWait(math.MaxInt64), ratelimit.WithClock(clk))
	fmt.Println(l.Acquire(context.Background()), clk.Now()) // the burst
	fmt.Println(l.Acquire(context.Background()), clk.Now()) // waits a minute for its turn

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := l.Acquire(ctx) // the next permit is a minute away, after ctx's deadline
	fmt.Println(errors.Is(err, ratelimit.ErrExceeded), errors.Is(err, context.DeadlineExceeded), clk.Now())
	// Output:
	// <nil> 0s
	// <nil> 1m0s
	// true true 1m0s
}

// limitedCall shows the three ways to take a permit.
func limitedCall(ctx context.Context) error {
	// README:begin ratelimit
	l, err := ratelimit.New(ratelimit.Permits(10), ratelimit.Period(time.Second),
		ratelimit.MaxWait(100*time.Millisecond))
	if err != nil {
		return err // a *policy.ConfigError carrying its R4C code
	}
	if !l.TryAcquire() { // a permit that is free now, or false
		return nil // skip the call: nothing was taken
	}
	if err := l.Acquire(ctx); err != nil { // or wait up to MaxWait for one, honouring ctx
		if e, ok := errors.AsType[*ratelimit.ExceededError](err); ok { // matches ratelimit.ErrExceeded
			wait, _ := e.RetryIn() // how long until the limiter's next permit is free
			return fmt.Errorf("retry in %v: %w", wait, err)
		}
		return err
	}
	r, err := l.Reserve() // or reserve one without waiting
	if err != nil {
		return fmt.Errorf("retry after %v: %w", r.Delay(), err)
	}
	// Wait r.Delay() before the call, or r.Cancel() to give the permit back: the next call
	// can take its turn, and the reservations behind it keep theirs.
	fmt.Println("wait", r.Delay(), "before the call")
	// README:end ratelimit
	return nil
}

func ExampleNew() {
	fmt.Println(limitedCall(context.Background()))
	// Output:
	// wait 0s before the call
	// <nil>
}

// Weighted permits, the retry-after of a weighted call, a call that can never pass, and a
// quota raised while the limiter runs.
func Example_weighted() {
	clk := clock.NewManual()
	// README:begin weighted
	l, err := ratelimit.New(ratelimit.Permits(100), ratelimit.Period(time.Second), ratelimit.WithClock(clk))
	if err != nil {
		panic(err)
	}
	fmt.Println(l.TryAcquireN(60)) // 60 of the 100 at once
	r, err := l.ReserveN(60)       // refused: MaxWait is 0; Delay says when 60 are free
	fmt.Println(err, "- 60 free in", r.Delay())
	fmt.Println(errors.Is(l.TryAcquireN(150), ratelimit.ErrExceedsBurst)) // never: split the batch

	cfg := l.Config()
	cfg.Permits = 200 // from the next call; the 40 left do not become 140 at once
	fmt.Println(l.Reconfigure(cfg), l.Snapshot().AvailablePermits)
	// README:end weighted
	// Output:
	// <nil>
	// ratelimit: rate limit exceeded - 60 free in 200ms
	// true
	// <nil> 40
}
