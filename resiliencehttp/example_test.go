package resiliencehttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencehttp"
)

func ExampleNewMiddleware() {
	clk := clock.NewManual()
	perClient, _ := keyed.New[string](ratelimit.Permits(10), ratelimit.Period(time.Second),
		ratelimit.WithClock(clk))
	limit, err := resiliencehttp.NewMiddleware(perClient)
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
	})))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	for i := 1; i <= 11; i++ {
		resp, err := client.Get(srv.URL)
		if err != nil {
			panic(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		switch i {
		case 10:
			fmt.Println(i, resp.Status)
		case 11:
			fmt.Println(i, resp.Status, "Retry-After:", resp.Header.Get("Retry-After"), "RateLimit:", resp.Header.Get("RateLimit"))
		}
	}
	// Output:
	// 10 200 OK
	// 11 429 Too Many Requests Retry-After: 1 RateLimit: "default";r=0;t=1
}

func ExampleNewTransport() {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls++; calls == 1 {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		fmt.Fprintln(w, "hello")
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()

	clk := clock.NewManual()
	reg, _ := resilience.NewRegistry(resilience.WithClock(clk))
	transport, err := resiliencehttp.NewTransport(reg, "greeter", base, resiliencehttp.TransportConfig{},
		resilience.RateLimiter(ratelimit.Permits(10), ratelimit.Period(time.Second)),
		resilience.Retry(retry.MaxAttempts(3)),
		resilience.CircuitBreaker(circuitbreaker.IgnoreOn(resiliencehttp.ErrNotFailure, ratelimit.ErrExceeded)))
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: transport}

	resp, err := client.Get(srv.URL)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Printf("%s %q after %v, in %d attempts\n", resp.Status, body, clk.Now(), calls)
	// Output:
	// 200 OK "hello\n" after 2s, in 2 attempts
}
