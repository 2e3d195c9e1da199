package resilience_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// The seed's SearchApi: 10 calls per second, tested with the manual clock.
func ExampleWrap1() {
	clk := clock.NewManual()
	reg, _ := resilience.NewRegistry(resilience.WithClock(clk))
	search, _ := resilience.Wrap1(reg, "SearchAPI.Search",
		func(ctx context.Context, q string) (string, error) { return "results for " + q, nil },
		resilience.RateLimiter(ratelimit.Permits(10), ratelimit.Period(time.Second)))

	ctx := context.Background()
	for i := range 10 {
		_, _ = search(ctx, fmt.Sprint("q", i)) // a full burst of 10 passes at once
	}
	_, err := search(ctx, "one too many")
	fmt.Println(err)

	clk.Advance(100 * time.Millisecond) // one permit comes back every 1s/10
	fmt.Println(search(ctx, "next"))
	// Output:
	// ratelimit: rate limit exceeded for "SearchAPI.Search"
	// results for next <nil>
}

// Two functions share one limiter by name; the 6th call waits for its permit.
func ExampleWrap2() {
	clk := clock.NewManual()
	reg, _ := resilience.NewRegistry(resilience.WithClock(clk))
	quota := resilience.RateLimiter(ratelimit.Name("geocoding"), ratelimit.Permits(5),
		ratelimit.Period(time.Second), ratelimit.MaxWait(500*time.Millisecond))
	geocode, _ := resilience.Wrap1(reg, "Geo.Geocode",
		func(ctx context.Context, address string) (string, error) { return "40.4,-3.7", nil }, quota)
	reverse, _ := resilience.Wrap2(reg, "Geo.Reverse",
		func(ctx context.Context, lat, lon float64) (string, error) { return "Gran Vía", nil }, quota)

	ctx := context.Background()
	for range 5 {
		_, _ = geocode(ctx, "Gran Vía")
	}
	addr, err := reverse(ctx, 40.4, -3.7)
	fmt.Println(addr, err, "after waiting", clk.Now())
	h, _ := reg.RateLimiter("geocoding")
	fmt.Printf("%+v\n", h.Snapshot())
	// Output:
	// Gran Vía <nil> after waiting 200ms
	// {Instance:geocoding AvailablePermits:0 Permits:5 Waiting:0 ShadowRejected:0}
}

// A pipeline applies its policies to calls given one at a time; its id names its limiter.
func ExampleNewPipeline() {
	reg, _ := resilience.NewRegistry(resilience.WithClock(clock.NewManual()))
	search, _ := resilience.NewPipeline[string](reg, "search",
		resilience.RateLimiter(ratelimit.Permits(10), ratelimit.Period(time.Second)),
		resilience.Retry(retry.MaxAttempts(2)))
	results, _ := search.Execute(context.Background(), func(ctx context.Context) (string, error) {
		return "results for resilience", nil
	})
	fmt.Println(results)
	fmt.Printf("%+v\n", reg.Snapshot().RateLimiters)
	// Output:
	// results for resilience
	// [{Instance:search AvailablePermits:9 Permits:10 Waiting:0 ShadowRejected:0}]
}

// An async call that must wait for its permit is scheduled on the clock; cancelling it
// before it starts gives the permit back.
func ExampleWrapAsync1() {
	clk := clock.NewManual()
	reg, _ := resilience.NewRegistry(resilience.WithClock(clk))
	geocode, _ := resilience.WrapAsync1(reg, "Geo.GeocodeAsync",
		func(ctx context.Context, address string) *async.Future[string] {
			return async.Completed("coords of " + address)
		},
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(5*time.Second)))

	ctx := context.Background()
	first, _ := geocode(ctx, "a").Await(ctx)
	second := geocode(ctx, "b")
	fmt.Println(first, "| pending timers:", clk.PendingTasks())
	fmt.Println("canceled before it started:", second.Cancel())
	third := geocode(ctx, "c") // takes the canceled slot
	clk.Advance(time.Second)
	fmt.Println(third.Await(ctx))
	// Output:
	// coords of a | pending timers: 1
	// canceled before it started: true
	// coords of c <nil>
}

// Configuration keys from a properties file: instances.<id>. wins over the code.
func ExampleLoadProperties() {
	props, _ := resilience.LoadProperties(strings.NewReader(`
defaults.rateLimiter.maxWait                   = 0
instances.SearchAPI.Search.rateLimiter.permits = 20
`))
	reg, _ := resilience.NewRegistry(resilience.WithProperties(props))
	_, _ = resilience.Wrap1(reg, "SearchAPI.Search",
		func(ctx context.Context, q string) (string, error) { return q, nil },
		resilience.RateLimiter(ratelimit.Permits(10), ratelimit.Period(time.Second)))
	h, _ := reg.RateLimiter("SearchAPI.Search")
	fmt.Println(h.Snapshot().Permits)

	_, err := resilience.NewRegistry(resilience.WithProperties(map[string]string{
		"instances.SearchAPI.Search.rateLimiter.permit": "20",
	}))
	fmt.Println(err)
	// Output:
	// 20
	// R4C-CFG-001: instances.SearchAPI.Search.rateLimiter.permit: unknown configuration key; did you mean instances.SearchAPI.Search.rateLimiter.permits?
}

type Item struct{ SKU, Name string }

func getItem(ctx context.Context, sku string) (Item, error) {
	return Item{SKU: sku, Name: "widget"}, nil
}

func cachedItem(ctx context.Context) (Item, error) { return Item{Name: "cached"}, nil }

// Every policy around one function; the order of the specs does not matter.
func ExampleWrap1_allPolicies() {
	reg, _ := resilience.NewRegistry()
	// README:begin all-policies
	get, err := resilience.Wrap1(reg, "Inventory.Get", getItem,
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(200*time.Millisecond), retry.AbortOn(ratelimit.ErrExceeded)),
		resilience.CircuitBreaker(circuitbreaker.IgnoreOn(ratelimit.ErrExceeded)),
		resilience.RateLimiter(ratelimit.Permits(50), ratelimit.Period(time.Second), ratelimit.MaxWait(100*time.Millisecond)),
		resilience.Timeout(2*time.Second),
		resilience.Bulkhead(bulkhead.MaxConcurrent(20)),
		resilience.Fallback(func(ctx context.Context, err error) (Item, error) { return cachedItem(ctx) }),
	)
	// README:end all-policies
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(get(context.Background(), "sku-1"))
	// Output:
	// {sku-1 widget} <nil>
}

// Status is a response with its HTTP status.
type Status struct{ Code int }

// unavailable reports a 503 returned with a nil error.
func unavailable(s Status, err error) bool { return err == nil && s.Code == 503 }

// A result predicate: a 503 returned as a value is retried, then returned as it is.
func ExampleWrap_resultPredicates() {
	reg, _ := resilience.NewRegistry()
	attempts := 0
	getStatus := func(ctx context.Context) (Status, error) {
		attempts++
		if attempts < 3 {
			return Status{503}, nil
		}
		return Status{200}, nil
	}
	// README:begin predicates
	get, err := resilience.Wrap(reg, "Status.Get", getStatus,
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(0), retry.If(unavailable)),
		resilience.CircuitBreaker(circuitbreaker.RecordIf(unavailable)),
	)
	// README:end predicates
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(get(context.Background()))
	fmt.Println("attempts:", attempts)
	// Output:
	// {200} <nil>
	// attempts: 3
}

// Order names another order than the default: one timeout around every attempt.
func ExampleOrder() {
	reg, _ := resilience.NewRegistry()
	call, err := resilience.Wrap(reg, "Report.Build", func(ctx context.Context) (string, error) { return "report", nil },
		resilience.Retry(retry.MaxAttempts(3)),
		resilience.Timeout(10*time.Second),
		resilience.Order(timeout.Layer, retry.Layer))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(call(context.Background()))
	// Output:
	// report <nil>
}
