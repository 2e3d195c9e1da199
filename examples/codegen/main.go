// Command codegen calls a pricing service through a PriceClient whose policies are
// declared on the interface, in prices.go, by //resilience: directives; resilience4go-gen
// wrote resilient_gen.go from them, and go generate writes it again after a change:
//
//	go generate ./examples/codegen
//	go run ./examples/codegen
//
// It runs on a manual clock, so its output is the same on every run: Price and Stock
// share the quota of 5 calls per second; once it is spent, Stock fails at once and Price
// retries until a permit comes back; while the service is down, Price answers with its
// fallback; a product that does not exist is neither retried nor replaced.
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
	"github.com/resilience4go/resilience4go/resilience"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "codegen:", err)
		os.Exit(1)
	}
}

// errUnavailable is what the pricing service answers while it is down.
var errUnavailable = errors.New("503 Service Unavailable")

// pricingService is the PriceClient the generated wrapper guards: an in-memory pricing
// service that can be taken down.
type pricingService struct {
	prices map[string]Price
	stock  map[string]int
	down   bool
	calls  int // the calls that reached the service
}

func newPricingService() *pricingService {
	return &pricingService{
		prices: map[string]Price{"apple": {120, "EUR"}, "pear": {95, "EUR"}, "plum": {60, "EUR"}},
		stock:  map[string]int{"apple": 40, "pear": 12, "plum": 0},
	}
}

func (s *pricingService) Price(_ context.Context, sku string) (Price, error) {
	s.calls++
	if s.down {
		return Price{}, errUnavailable
	}
	p, ok := s.prices[sku]
	if !ok {
		return Price{}, fmt.Errorf("%w: %q", ErrNotFound, sku)
	}
	return p, nil
}

func (s *pricingService) Stock(_ context.Context, sku string) (int, error) {
	s.calls++
	if s.down {
		return 0, errUnavailable
	}
	return s.stock[sku], nil
}

func run(ctx context.Context, w io.Writer) error {
	clk := clock.NewManual()
	reg, err := resilience.NewRegistry(
		resilience.WithClock(clk),
		resilience.WithEventListener(func(e policy.Event) { fmt.Fprintf(w, "          event %v\n", e) }))
	if err != nil {
		return err
	}
	svc := newPricingService()

	// README:begin use
	client, err := NewPriceClientResilient(svc, reg) // every method wrapped once, here
	if err != nil {
		return err // a *policy.ConfigError with its R4C code
	}
	// README:end use
	limiter, err := reg.RateLimiter("pricing")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Price and Stock share the limiter %q: %d permits available\n", limiter.Snapshot().Instance, limiter.Snapshot().AvailablePermits)

	// Each call prints when it returned, what it returned and, when it took time, how long
	// it took; the events of the call come before it.
	done := func(start time.Duration, call, result string) {
		if d := clk.Now() - start; d > 0 {
			result += fmt.Sprintf(", after %v", d)
		}
		fmt.Fprintf(w, "%6v  %s %s\n", clk.Now(), call, result)
	}
	price := func(sku string) {
		start := clk.Now()
		p, err := client.Price(ctx, sku)
		result := fmt.Sprintf("= %d.%02d %s", p.Cents/100, p.Cents%100, p.Currency)
		switch {
		case err != nil:
			result = "failed: " + err.Error()
		case p == Price{}:
			result = "= unknown"
		}
		done(start, fmt.Sprintf("Price(%q)", sku), result)
	}
	stock := func(sku string) {
		start := clk.Now()
		n, err := client.Stock(ctx, sku)
		if err != nil {
			done(start, fmt.Sprintf("Stock(%q)", sku), "failed: "+err.Error())
			return
		}
		done(start, fmt.Sprintf("Stock(%q)", sku), fmt.Sprintf("= %d", n))
	}

	fmt.Fprintln(w, "-- a burst of 5 calls passes")
	for _, sku := range []string{"apple", "pear"} {
		price(sku)
		stock(sku)
	}
	price("plum")
	fmt.Fprintln(w, "-- the quota is spent: Stock fails at once, Price retries until a permit comes back")
	stock("plum")
	price("plum")

	clk.Advance(time.Second)
	fmt.Fprintln(w, "-- 1s later, the service is down: every attempt fails, and the fallback answers")
	svc.down = true
	price("apple")

	svc.down = false
	fmt.Fprintln(w, "-- a product that does not exist: not retried, not replaced")
	price("durian")
	return nil
}
