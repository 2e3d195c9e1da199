// Command geocoding shares one rate limiter between two functions, as a quota usually
// covers a whole API rather than one of its methods: geocode and reverse both take their
// permits from the limiter named "geocoding", 5 per second, and a call may wait up to
// 500ms for its permit.
//
//	go run ./examples/geocoding
//
// It runs on a manual clock, so its output is the same on every run: once the burst of 5
// is spent, the next call waits 200ms (1s / 5) for its permit.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "geocoding:", err)
		os.Exit(1)
	}
}

// A tiny geocoding service.
var places = []struct {
	address  string
	lat, lon float64
}{
	{"Plaza Mayor, Madrid", 40.4155, -3.7074},
	{"Plaça de Catalunya, Barcelona", 41.3870, 2.1701},
	{"Puerta del Sol, Madrid", 40.4169, -3.7035},
	{"Plaza de España, Sevilla", 37.3772, -5.9869},
	{"Plaza del Pilar, Zaragoza", 41.6567, -0.8787},
}

func geocode(_ context.Context, address string) (string, error) {
	for _, p := range places {
		if p.address == address {
			return fmt.Sprintf("%.4f, %.4f", p.lat, p.lon), nil
		}
	}
	return "", fmt.Errorf("no such address: %q", address)
}

func reverse(_ context.Context, lat, lon float64) (string, error) {
	for _, p := range places {
		if p.lat == lat && p.lon == lon {
			return p.address, nil
		}
	}
	return "", fmt.Errorf("nothing at %.4f, %.4f", lat, lon)
}

func run(ctx context.Context, w io.Writer) error {
	clk := clock.NewManual()
	reg, err := resilience.NewRegistry(
		resilience.WithClock(clk),
		resilience.WithEventListener(func(e policy.Event) {
			if e.Kind == ratelimit.EventWaited {
				fmt.Fprintf(w, "        event: %v\n", e)
			}
		}))
	if err != nil {
		return err
	}

	// One spec, used by both functions: the same name, so one limiter.
	quota := resilience.RateLimiter(
		ratelimit.Name("geocoding"),
		ratelimit.Permits(5),
		ratelimit.Period(time.Second),
		ratelimit.MaxWait(500*time.Millisecond))
	geo, err := resilience.Wrap1(reg, "GeocodingAPI.Geocode", geocode, quota)
	if err != nil {
		return err
	}
	rev, err := resilience.Wrap2(reg, "GeocodingAPI.Reverse", reverse, quota)
	if err != nil {
		return err
	}
	limiter, err := reg.RateLimiter("geocoding")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "geocode and reverse share the limiter %q: 5 permits per 1s, maxWait 500ms; %d permits available\n",
		limiter.Snapshot().Instance, limiter.Snapshot().AvailablePermits)

	// call prints one call: when it started, how long it waited for its permit and what
	// it returned. On the manual clock the function itself takes no time, so the clock
	// moves only while a call waits for its permit.
	n := 0
	call := func(what string, fn func() (string, error)) {
		n++
		start := clk.Now()
		got, err := fn()
		if err != nil {
			got = "error: " + err.Error()
		}
		fmt.Fprintf(w, "%5v  #%d %-45s waited %-5v → %s\n", start, n, what, clk.Now()-start, got)
	}
	for i := range 3 {
		p := places[i]
		call(fmt.Sprintf("geocode(%q)", p.address), func() (string, error) { return geo(ctx, p.address) })
		if i < 2 {
			call(fmt.Sprintf("reverse(%.4f, %.4f)", p.lat, p.lon), func() (string, error) { return rev(ctx, p.lat, p.lon) })
		}
	}
	fmt.Fprintf(w, "the burst is spent: %d permits available\n", limiter.Snapshot().AvailablePermits)
	for i := 3; i < 5; i++ {
		p := places[i]
		call(fmt.Sprintf("reverse(%.4f, %.4f)", p.lat, p.lon), func() (string, error) { return rev(ctx, p.lat, p.lon) })
		call(fmt.Sprintf("geocode(%q)", p.address), func() (string, error) { return geo(ctx, p.address) })
	}

	clk.Advance(time.Second)
	fmt.Fprintf(w, "after a quiet second (t=%v): %+v\n", clk.Now(), limiter.Snapshot())

	// A third function may join the limiter only with the same configuration.
	_, err = resilience.Wrap1(reg, "GeocodingAPI.Batch",
		func(context.Context, []string) ([]string, error) { return nil, nil },
		resilience.RateLimiter(ratelimit.Name("geocoding"), ratelimit.Permits(50), ratelimit.Period(10*time.Second)))
	fmt.Fprintf(w, "wrapping GeocodingAPI.Batch with the name \"geocoding\" and 50 per 10s:\n  %v\n", err)
	return nil
}
