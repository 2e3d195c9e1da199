package shapes_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/cmd/resilience4go-gen/internal/codegen/golden/shapes"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// The generated PriceClientResilient (GN-3, GN-4), method by method: each shape reaches
// the implementation with its arguments, and each policy the directives name is built
// with what they say and does its work.

// client is the PriceClient the wrapper calls: it records each call, and answers with
// what its fields say (by default, a success).
type client struct {
	mu    sync.Mutex
	calls []string

	priceErr error                       // Price fails with it
	pingErr  error                       // Ping fails with it
	pingWait chan struct{}               // if set, Ping closes it and waits for its context to end
	pingCtx  error                       // the error of Ping's context when it ended
	quoteErr error                       // Quote fails with it
	async    func() *async.Future[Price] // PriceAsync's future; default a completed one
}

// Price is shapes.Price, shorter.
type Price = shapes.Price

func (c *client) record(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, fmt.Sprintf(format, args...))
}

func (c *client) recorded() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.calls...)
}

func (c *client) Price(_ context.Context, sku string) (Price, error) {
	c.record("Price(%s)", sku)
	if c.priceErr != nil {
		return Price{}, c.priceErr
	}
	return Price{Cents: 250, Currency: "USD"}, nil
}

func (c *client) Ping(ctx context.Context) error {
	c.record("Ping()")
	if c.pingWait != nil {
		close(c.pingWait)
		<-ctx.Done()
		c.pingCtx = ctx.Err()
		return ctx.Err()
	}
	return c.pingErr
}

func (c *client) Quote(_ context.Context, sku string, qty int, coupons ...string) (shapes.Quote, error) {
	c.record("Quote(%s, %d, %q)", sku, qty, coupons)
	if c.quoteErr != nil {
		return shapes.Quote{}, c.quoteErr
	}
	return shapes.Quote{Price: Price{Cents: int64(100 * qty), Currency: "USD"}, Qty: qty}, nil
}

func (c *client) Prices(_ context.Context, skus []string, currency string) ([]Price, error) {
	c.record("Prices(%q, %s)", skus, currency)
	out := make([]Price, len(skus))
	for i := range out {
		out[i] = Price{Cents: int64(i), Currency: currency}
	}
	return out, nil
}

func (c *client) PriceAsync(_ context.Context, sku string) *async.Future[Price] {
	c.record("PriceAsync(%s)", sku)
	if c.async != nil {
		return c.async()
	}
	return async.Completed(Price{Cents: 300, Currency: "USD"})
}

func (c *client) Watch(_ context.Context, sku string, n int) *async.Future[[]Price] {
	c.record("Watch(%s, %d)", sku, n)
	return async.Completed(make([]Price, n))
}

func (c *client) Refresh(context.Context) *async.Future[int] {
	c.record("Refresh()")
	return async.Completed(42)
}

func (c *client) QuoteFallback(_ context.Context, err error) (shapes.Quote, error) {
	c.record("QuoteFallback(%v)", err)
	return shapes.Quote{Price: Price{Currency: "fallback"}}, nil
}

func (c *client) Close() error {
	c.record("Close()")
	return io.ErrClosedPipe
}

func (c *client) Name() string {
	c.record("Name()")
	return "fake"
}

var _ shapes.PriceClient = (*client)(nil)

// configs are the named configurations the directives select: config=strict (Quote's
// circuit breaker) and config=slow (Prices' timeout).
var configs = map[string]string{
	"configs.strict.circuitBreaker.failureRateThreshold": "25",
	"configs.strict.circuitBreaker.minimumCalls":         "2",
	"configs.strict.circuitBreaker.slidingWindowSize":    "4",
	"configs.slow.timeout.duration":                      "10s",
	"instances.PriceClient.Ping.timeout.duration":        "9s", // ignored: locked=true
}

// fixture is a wrapper around a client, on a registry with a manual clock.
type fixture struct {
	clk  *clock.Manual
	reg  *resilience.Registry
	impl *client
	w    *shapes.PriceClientResilient

	mu     sync.Mutex
	events []policy.Event
}

func newFixture(t *testing.T, impl *client) *fixture {
	t.Helper()
	f := &fixture{clk: clock.NewManual(), impl: impl}
	reg, err := resilience.NewRegistry(resilience.WithClock(f.clk), resilience.WithProperties(configs),
		resilience.WithEventListener(func(e policy.Event) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.events = append(f.events, e)
		}))
	require.NoError(t, err)
	f.reg = reg
	f.w, err = shapes.NewPriceClientResilient(impl, reg)
	require.NoError(t, err)
	require.Equal(t, []string{"LockedOverrideIgnored PriceClient.Ping"}, f.kinds(), "the key that locked=true ignores, reported once")
	f.events = nil // the calls' events only
	return f
}

// kinds returns the kinds of the events published so far, each with its instance.
func (f *fixture) kinds() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, len(f.events))
	for i, e := range f.events {
		out[i] = e.Kind.String() + " " + e.Instance
	}
	return out
}

// SPEC GN-4, RG-1, RG-3: the constructor wraps every guarded method once, with the instance
// id PriceClient.<Method> (or the name= of a directive), and builds each policy with what
// its directives say; the named configurations and the keys override them.
func TestNew_InstancesAndTheirConfiguration(t *testing.T) {
	f := newFixture(t, &client{})
	ids := map[policy.Layer][]string{}
	for _, p := range f.reg.Snapshot().Policies {
		ids[p.Layer] = append(ids[p.Layer], p.ID)
	}
	assert.Equal(t, map[policy.Layer][]string{
		circuitbreaker.Layer: {"PriceClient.Ping", "PriceClient.Price", "PriceClient.PriceAsync", "PriceClient.Prices",
			"PriceClient.Quote", "PriceClient.QuoteFallback", "PriceClient.Refresh", "PriceClient.Watch"},
		ratelimit.Layer:     {"PriceClient.Price"},
		bulkhead.Layer:      {"quotes"},
		hedge.Layer:         {"PriceClient.PriceAsync"},
		adaptivelimit.Layer: {"PriceClient.Watch"},
	}, ids, "the instances with a state; Close and Name pass through and have none")

	// Price: the interface's breaker, its own rate limiter and retry.
	price, err := resilience.Lookup[*circuitbreaker.Breaker](f.reg, circuitbreaker.Layer, "PriceClient.Price")
	require.NoError(t, err)
	assert.Equal(t, circuitbreaker.Config{
		FailureRateThreshold: 50, SlidingWindowType: circuitbreaker.TimeBased, SlidingWindowSize: 20, MinimumCalls: 5,
		WaitInOpen: 30 * time.Second, PermittedInHalfOpen: 2, MaxWaitInHalfOpen: time.Second,
		SlowCallThreshold: 2 * time.Second, SlowCallRateThreshold: 80,
		RecordOn: []error{shapes.ErrBadInput}, IgnoreOn: []error{shapes.ErrNotFound},
	}, price.Config())
	rl, err := f.reg.RateLimiter("PriceClient.Price")
	require.NoError(t, err)
	assert.Equal(t, ratelimit.Config{Permits: 10, Period: time.Second, MaxWait: 200 * time.Millisecond}, rl.(*ratelimit.Limiter).Config())
	rt, err := resilience.Lookup[*retry.Retry](f.reg, retry.Layer, "PriceClient.Price")
	require.NoError(t, err)
	rc := rt.Config()
	assert.Equal(t, 3, rc.MaxAttempts)
	assert.Equal(t, 100*time.Millisecond, rc.Delay)
	assert.Equal(t, 2.0, rc.Multiplier)
	assert.Equal(t, time.Second, rc.MaxDelay)
	assert.Equal(t, 0.1, rc.Jitter)
	assert.True(t, rc.WaitForPermit)
	assert.Equal(t, []error{shapes.ErrNotFound, io.EOF}, rc.AbortOn)
	assert.Equal(t, []error{shapes.ErrBadInput}, rc.RetryOn)

	// Quote: its own breaker, config=strict, replaces the interface's; a shared bulkhead.
	quote, err := resilience.Lookup[*circuitbreaker.Breaker](f.reg, circuitbreaker.Layer, "PriceClient.Quote")
	require.NoError(t, err)
	assert.Equal(t, 25.0, quote.Config().FailureRateThreshold, "configs.strict")
	assert.Equal(t, 2, quote.Config().MinimumCalls, "configs.strict")
	assert.Equal(t, circuitbreaker.CountBased, quote.Config().SlidingWindowType, "nothing of the interface's breaker")
	assert.Empty(t, quote.Config().RecordOn, "nothing of the interface's breaker")
	bh, err := resilience.Lookup[*bulkhead.Bulkhead](f.reg, bulkhead.Layer, "quotes")
	require.NoError(t, err)
	assert.Equal(t, bh.Snapshot().MaxConcurrent, 4)
	_, err = resilience.Lookup[*bulkhead.Bulkhead](f.reg, bulkhead.Layer, "PriceClient.Quote")
	assert.Error(t, err, "the bulkhead has its name= as its id")

	// Ping and Prices: timeouts.
	ping, err := resilience.Lookup[*timeout.Timeout](f.reg, timeout.Layer, "PriceClient.Ping")
	require.NoError(t, err)
	assert.Equal(t, timeout.Config{Duration: 1500 * time.Millisecond}, ping.Config(), "locked=true: the directive's value wins over the instance's key")
	require.Len(t, f.reg.LockedOverrides(), 1)
	assert.Equal(t, "instances.PriceClient.Ping.timeout.duration", f.reg.LockedOverrides()[0].Key)
	prices, err := resilience.Lookup[*timeout.Timeout](f.reg, timeout.Layer, "PriceClient.Prices")
	require.NoError(t, err)
	assert.Equal(t, timeout.Config{Duration: 10 * time.Second, Disabled: true}, prices.Config(), "configs.slow, and enabled=false")

	// PriceAsync's hedge and Watch's adaptive limit and timeout.
	hg, err := resilience.Lookup[*hedge.Hedge](f.reg, hedge.Layer, "PriceClient.PriceAsync")
	require.NoError(t, err)
	assert.Equal(t, hedge.Snapshot{
		Instance: "PriceClient.PriceAsync", BudgetAvailable: 50, // 5 per second over 10s, no call yet
		Delay: 50 * time.Millisecond, MaxAttempts: 3, HedgeOn: []error{shapes.ErrBadInput}, AbortOn: []error{shapes.ErrNotFound},
		BudgetPercent: 20, BudgetWindow: 10 * time.Second, BudgetMinPerSecond: 5,
	}, hg.Snapshot())
	al, err := resilience.Lookup[*adaptivelimit.Limiter](f.reg, adaptivelimit.Layer, "PriceClient.Watch")
	require.NoError(t, err)
	assert.Equal(t, adaptivelimit.Config{
		Algorithm: adaptivelimit.Gradient2, InitialLimit: 10, MinLimit: 2, MaxLimit: 50, MaxWait: 5 * time.Millisecond,
		BackoffRatio: 0.9, LatencyThreshold: 20 * time.Millisecond, Tolerance: 2, Smoothing: 0.2, BaselineWindow: 50,
		PriorityReserve: 0.5,
		DropOn:          []error{shapes.ErrBadInput}, IgnoreOn: []error{shapes.ErrNotFound},
	}, al.Config())
	watch, err := resilience.Lookup[*timeout.Timeout](f.reg, timeout.Layer, "PriceClient.Watch")
	require.NoError(t, err)
	assert.Equal(t, 3*time.Second, watch.Config().Duration)

	assert.Empty(t, f.reg.UnusedKeys(), "every named configuration is used")
	assert.Empty(t, f.impl.recorded(), "building calls nothing")
}

// SPEC GN-4, RG-4: a directive's config= needs its configuration: without configs.slow, or
// configs.strict, the constructor fails with R4C-REG-004, the error of the first wrap
// that fails (the methods are wrapped in the order of their names); a nil
// implementation is R4C-REG-010.
func TestNew_Errors(t *testing.T) {
	for _, c := range []struct {
		props map[string]string
		says  string
	}{
		{nil, `timeout.useConfig = "slow": no configuration keys configs.slow.timeout.* (instance PriceClient.Prices)`},
		{map[string]string{"configs.slow.timeout.duration": "10s"},
			`circuitBreaker.useConfig = "strict": no configuration keys configs.strict.circuitBreaker.* (instance PriceClient.Quote)`},
	} {
		reg, err := resilience.NewRegistry(resilience.WithClock(clock.NewManual()), resilience.WithProperties(c.props))
		require.NoError(t, err)
		w, err := shapes.NewPriceClientResilient(&client{}, reg)
		assert.Nil(t, w)
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, r4c.UnknownConfig, ce.Code)
		assert.Contains(t, err.Error(), c.says)
	}

	reg, err := resilience.NewRegistry()
	require.NoError(t, err)
	w, err := shapes.NewPriceClientResilient(nil, reg)
	var ce *policy.ConfigError
	assert.Nil(t, w)
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, r4c.BadSpec, ce.Code)
}

// A call that succeeds passes through every layer, with its argument.
func TestPrice_Success(t *testing.T) {
	f := newFixture(t, &client{})
	got, err := f.w.Price(context.Background(), "sku-1")
	require.NoError(t, err)
	assert.Equal(t, Price{Cents: 250, Currency: "USD"}, got)
	assert.Equal(t, []string{"Price(sku-1)"}, f.impl.recorded())
	assert.Empty(t, f.kinds(), "RG-5: an admitted call publishes nothing")
}

// SPEC CO-1, CO-8: Price's retry retries ErrBadInput (retryOn) 3 times in all, with a delay of
// 100ms then 200ms (multiplier 2, jitter 10%), and its fallback function, unknownPrice,
// answers the last failure (handleOn=ErrBadInput): the fallback is outside the retry.
func TestPrice_RetryThenFallback(t *testing.T) {
	f := newFixture(t, &client{priceErr: shapes.ErrBadInput})
	got, err := f.w.Price(context.Background(), "sku-1")
	require.NoError(t, err, "the fallback answers")
	assert.Equal(t, Price{Currency: "EUR"}, got, "unknownPrice's answer")
	assert.Equal(t, []string{"Price(sku-1)", "Price(sku-1)", "Price(sku-1)"}, f.impl.recorded(), "maxAttempts=3")
	assert.Equal(t, []string{
		"RetryAttempt PriceClient.Price", "RetryAttempt PriceClient.Price", "RetryExhausted PriceClient.Price",
		"FallbackApplied PriceClient.Price",
	}, f.kinds())
	assert.InDelta(t, float64(300*time.Millisecond), float64(f.clk.Now()), float64(30*time.Millisecond),
		"the retry waited 100ms and 200ms, ±10%%, on the manual clock")
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](f.reg, circuitbreaker.Layer, "PriceClient.Price")
	require.NoError(t, err)
	assert.Equal(t, 3, cb.Snapshot().FailedCalls, "recordOn=ErrBadInput: each attempt is a failure of the breaker inside the retry")
}

// SPEC CO-8: Price's retry aborts on ErrNotFound (abortOn): one call; its fallback handles
// ErrBadInput only, so the error comes through. io.EOF is aborted on too, and the
// fallback ignores it (ignoreOn).
func TestPrice_RetryAborts(t *testing.T) {
	for _, cause := range []error{shapes.ErrNotFound, io.EOF} {
		f := newFixture(t, &client{priceErr: cause})
		_, err := f.w.Price(context.Background(), "sku-1")
		require.ErrorIs(t, err, cause)
		assert.Equal(t, []string{"Price(sku-1)"}, f.impl.recorded(), "%v: one call, no retry", cause)
		assert.Equal(t, []string{"RetryAborted PriceClient.Price"}, f.kinds(), "%v: no fallback", cause)
		assert.Zero(t, f.clk.Now(), "no delay")
	}
}

// SPEC RL-3, RL-7, RL-8: Price's rate limiter, 10 per second with a maxWait of 200ms:
// once the burst is spent, a call waits 100ms for its permit, on the caller's goroutine
// (on the manual clock, the wait moves the clock).
func TestPrice_RateLimiter(t *testing.T) {
	f := newFixture(t, &client{})
	for range 10 {
		_, err := f.w.Price(context.Background(), "sku")
		require.NoError(t, err)
	}
	assert.Zero(t, f.clk.Now())
	_, err := f.w.Price(context.Background(), "sku")
	require.NoError(t, err)
	assert.Equal(t, 100*time.Millisecond, f.clk.Now(), "the 11th call waited 100ms for its permit")
	assert.Equal(t, []string{"RateLimiterWaited PriceClient.Price"}, f.kinds())
}

// Ping returns an error only: its fallback function, pingFallback, answers its failure
// with nil, and the call reaches the implementation once (no retry).
func TestPing_Fallback(t *testing.T) {
	f := newFixture(t, &client{pingErr: errors.New("down")})
	require.NoError(t, f.w.Ping(context.Background()))
	assert.Equal(t, []string{"Ping()"}, f.impl.recorded())
	assert.Equal(t, []string{"FallbackApplied PriceClient.Ping"}, f.kinds())

	f = newFixture(t, &client{})
	require.NoError(t, f.w.Ping(context.Background()))
	assert.Empty(t, f.kinds(), "a success needs no fallback")
}

// Ping's timeout, 1500ms: the implementation's context ends when the manual clock
// passes the deadline, the timeout fails the call, and the fallback answers.
func TestPing_TimeoutThenFallback(t *testing.T) {
	entered := make(chan struct{})
	f := newFixture(t, &client{pingWait: entered})
	done := make(chan error, 1)
	go func() { done <- f.w.Ping(context.Background()) }()
	<-entered // the deadline's timer is armed before the implementation is called
	f.clk.Advance(1499 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("Ping returned before its deadline: %v", err)
	default:
	}
	f.clk.Advance(time.Millisecond)
	require.NoError(t, <-done, "the fallback answers the timeout")
	assert.ErrorIs(t, f.impl.pingCtx, context.DeadlineExceeded, "the implementation's context ended at the deadline")
	assert.Equal(t, []string{"TimeoutExceeded PriceClient.Ping", "FallbackApplied PriceClient.Ping"}, f.kinds())
}

// Quote's three arguments, the last variadic, reach the implementation through its
// argument struct, with none, one or several coupons, and a slice passed with ....
func TestQuote_Arguments(t *testing.T) {
	f := newFixture(t, &client{})
	ctx := context.Background()
	got, err := f.w.Quote(ctx, "sku-1", 3, "TEN", "FREESHIP")
	require.NoError(t, err)
	assert.Equal(t, shapes.Quote{Price: Price{Cents: 300, Currency: "USD"}, Qty: 3}, got)
	_, err = f.w.Quote(ctx, "sku-2", 1)
	require.NoError(t, err)
	coupons := []string{"A"}
	_, err = f.w.Quote(ctx, "sku-3", 2, coupons...)
	require.NoError(t, err)
	assert.Equal(t, []string{
		`Quote(sku-1, 3, ["TEN" "FREESHIP"])`,
		`Quote(sku-2, 1, [])`,
		`Quote(sku-3, 2, ["A"])`,
	}, f.impl.recorded())
	bh, err := resilience.Lookup[*bulkhead.Bulkhead](f.reg, bulkhead.Layer, "quotes")
	require.NoError(t, err)
	assert.Equal(t, 4, bh.Snapshot().AvailableSlots, "every slot is back")
}

// Quote's fallback is a method of the interface, QuoteFallback, called on the
// implementation with the error.
func TestQuote_FallbackMethod(t *testing.T) {
	cause := errors.New("quote service down")
	f := newFixture(t, &client{quoteErr: cause})
	got, err := f.w.Quote(context.Background(), "sku-1", 2, "X")
	require.NoError(t, err)
	assert.Equal(t, shapes.Quote{Price: Price{Currency: "fallback"}}, got)
	assert.Equal(t, []string{`Quote(sku-1, 2, ["X"])`, "QuoteFallback(quote service down)"}, f.impl.recorded())
	assert.Equal(t, []string{"FallbackApplied PriceClient.Quote"}, f.kinds())
}

// Prices' two arguments reach the implementation; its timeout is disabled.
func TestPrices_Arguments(t *testing.T) {
	f := newFixture(t, &client{})
	got, err := f.w.Prices(context.Background(), []string{"a", "b"}, "EUR")
	require.NoError(t, err)
	assert.Equal(t, []Price{{Cents: 0, Currency: "EUR"}, {Cents: 1, Currency: "EUR"}}, got)
	assert.Equal(t, []string{`Prices(["a" "b"], EUR)`}, f.impl.recorded())
	assert.Zero(t, f.clk.PendingTasks(), "enabled=false: no deadline timer")
}

// SPEC AS-1: the methods that return futures return futures that resolve with the
// implementation's results, their arguments passed through (Watch's two through its
// argument struct).
func TestFutures_Resolve(t *testing.T) {
	f := newFixture(t, &client{})
	ctx := context.Background()
	p, err := f.w.PriceAsync(ctx, "sku-1").Await(ctx)
	require.NoError(t, err)
	assert.Equal(t, Price{Cents: 300, Currency: "USD"}, p)
	prices, err := f.w.Watch(ctx, "sku-2", 3).Await(ctx)
	require.NoError(t, err)
	assert.Len(t, prices, 3)
	n, err := f.w.Refresh(ctx).Await(ctx)
	require.NoError(t, err)
	assert.Equal(t, 42, n)
	assert.Equal(t, []string{"PriceAsync(sku-1)", "Watch(sku-2, 3)", "Refresh()"}, f.impl.recorded())
	assert.Empty(t, f.kinds(), "no hedge: the first attempt answered at once")
}

// SPEC HG-3, HG-7, HG-13: PriceAsync's hedge starts a second attempt when the first has
// not answered within its delay, 50ms on the manual clock, and the first answer wins.
func TestPriceAsync_Hedges(t *testing.T) {
	var mu sync.Mutex
	var completes []func(Price, error)
	f := newFixture(t, &client{async: func() *async.Future[Price] {
		fut, complete := async.NewPromise[Price]()
		mu.Lock()
		defer mu.Unlock()
		completes = append(completes, complete)
		return fut
	}})
	ctx := context.Background()
	fut := f.w.PriceAsync(ctx, "sku-1")
	assert.Equal(t, []string{"PriceAsync(sku-1)"}, f.impl.recorded())
	f.clk.Advance(50 * time.Millisecond)
	assert.Equal(t, []string{"PriceAsync(sku-1)", "PriceAsync(sku-1)"}, f.impl.recorded(), "a hedge after 50ms")
	mu.Lock()
	second := completes[1]
	mu.Unlock()
	second(Price{Cents: 1, Currency: "second"}, nil)
	got, err := fut.Await(ctx)
	require.NoError(t, err)
	assert.Equal(t, Price{Cents: 1, Currency: "second"}, got)
	assert.Equal(t, []string{"Hedged PriceClient.PriceAsync", "HedgeWon PriceClient.PriceAsync"}, f.kinds())
}

// SPEC HG-5: a future that fails with ErrNotFound, which the hedge aborts on, fails the
// call at once.
func TestPriceAsync_Fails(t *testing.T) {
	f := newFixture(t, &client{async: func() *async.Future[Price] { return async.Failed[Price](shapes.ErrNotFound) }})
	_, err := f.w.PriceAsync(context.Background(), "sku-1").Await(context.Background())
	require.ErrorIs(t, err, shapes.ErrNotFound)
	assert.Equal(t, []string{"PriceAsync(sku-1)"}, f.impl.recorded(), "abortOn=ErrNotFound: no hedge")
}

// SPEC GN-3: the methods without a context (Close, Name) pass through to the implementation;
// QuoteFallback, which can be guarded, is guarded by the interface's breaker.
func TestPassThrough(t *testing.T) {
	f := newFixture(t, &client{})
	assert.Equal(t, "fake", f.w.Name())
	assert.ErrorIs(t, f.w.Close(), io.ErrClosedPipe, "Close's error is the implementation's")
	q, err := f.w.QuoteFallback(context.Background(), io.EOF)
	require.NoError(t, err)
	assert.Equal(t, "fallback", q.Price.Currency)
	assert.Equal(t, []string{"Name()", "Close()", "QuoteFallback(EOF)"}, f.impl.recorded())
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](f.reg, circuitbreaker.Layer, "PriceClient.QuoteFallback")
	require.NoError(t, err)
	assert.Equal(t, 1, cb.Snapshot().BufferedCalls, "the call went through the breaker")
}
