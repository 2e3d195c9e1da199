// Command tenants gives each tenant of an HTTP API its own rate limit: the "acme" plan
// allows 5 requests per second, every other tenant the default of 2. It shows the two
// tenants held to their own limits, a limit changed at run time (a tenant upgrading its
// plan), and a weighted request (an export that costs 3 permits), decided inside the
// handler once the tenant is known. A manual clock makes the output the same on every
// run.
//
//	go run ./examples/tenants
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	"github.com/resilience4go/resilience4go/resiliencehttp"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "tenants:", err)
		os.Exit(1)
	}
}

// planOf is what the tenants' plans allow, as the limiter reads them: "" for the default.
func planOf(tenant string) string {
	if tenant == "acme" {
		return "5/1s"
	}
	return ""
}

func run(_ context.Context, out io.Writer) error {
	clk := clock.NewManual()
	// README:begin tenants
	perTenant, err := keyed.New[string](
		ratelimit.Permits(2), ratelimit.Period(time.Second), // the default plan: 2 requests per second
		keyed.PerKey(planOf),     // a tenant's own plan, read when its cell is made
		ratelimit.WithClock(clk), // leave out for the system clock
	)
	if err != nil {
		return err
	}
	// Requests are keyed by tenant and cost their weight: an export costs 3.
	limit, err := resiliencehttp.NewMiddleware(perTenant,
		resiliencehttp.KeyFunc(func(r *http.Request) string { return r.Header.Get("X-Tenant") }),
		resiliencehttp.Weight(func(r *http.Request) int {
			if r.URL.Path == "/export" {
				return 3
			}
			return 1
		}),
		resiliencehttp.AlwaysSendHeaders(true))
	if err != nil {
		return err
	}
	// README:end tenants
	// README:begin newlimit
	// A decision inside the handler, once the tenant is known: a report costs 3 permits.
	limitIn, err := resiliencehttp.NewLimit(perTenant)
	if err != nil {
		return err
	}
	reports := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tenant := r.Header.Get("X-Tenant") // as authentication found it
		if !limitIn(w, r, tenant, 3) {
			return // refused: answered 429, with its headers
		}
		fmt.Fprint(w, "report")
	})
	// README:end newlimit
	mux := http.NewServeMux()
	mux.Handle("/reports", reports)
	mux.Handle("/", limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })))

	send := func(tenant, path string) {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.Header.Set("X-Tenant", tenant)
		mux.ServeHTTP(w, r)
		fmt.Fprintf(out, "  %-5s %-8s %d  Ratelimit-Policy: %s  Ratelimit: %s", tenant, path, w.Code,
			w.Header().Get("Ratelimit-Policy"), w.Header().Get("Ratelimit"))
		if ra := w.Header().Get("Retry-After"); ra != "" {
			fmt.Fprintf(out, "  Retry-After: %s", ra)
		}
		fmt.Fprintln(out)
	}

	fmt.Fprintln(out, "each tenant at its own limit, 6 requests at once:")
	for _, tenant := range []string{"acme", "bolt"} {
		for range 6 {
			send(tenant, "/items")
		}
	}

	fmt.Fprintln(out, "bolt upgrades to 10 per second (a live change), 1s later:")
	clk.Advance(time.Second)
	// README:begin setlimit
	if err := perTenant.SetLimit("bolt", "10/1s"); err != nil {
		return err
	}
	// README:end setlimit
	for range 3 {
		send("bolt", "/items")
	}

	fmt.Fprintln(out, "weighted requests, 1s later: an export costs 3 permits, a report 3 (decided in its handler):")
	clk.Advance(time.Second)
	send("acme", "/export")
	send("acme", "/reports")
	send("acme", "/items")
	return nil
}
