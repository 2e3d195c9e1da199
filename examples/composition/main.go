// Command composition guards calls to a misbehaving HTTP API with all six policies:
// fallback, retry, circuit breaker, rate limiter, timeout and bulkhead. The specs are given
// in a scrambled order; the layers are always applied in one fixed order, outermost first:
//
//	Fallback → Retry → CircuitBreaker → RateLimiter → Timeout → Bulkhead → the function
//
// The program prints the event stream of the registry as the calls go, and the result of
// each call. It runs on the real clock against a local server on 127.0.0.1 and takes
// about two seconds.
//
//	go run ./examples/composition
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "composition:", err)
		os.Exit(1)
	}
}

// The policies' settings.
const (
	retryDelay = 100 * time.Millisecond
	waitInOpen = 500 * time.Millisecond
	callBudget = 200 * time.Millisecond // the timeout of each attempt
	slots      = 2                      // the bulkhead's calls in flight
)

// report is what run observed, for the tests.
type report struct {
	Events   []policy.Event
	Results  map[string]string // by query: the result, or "error: …"
	Requests int               // requests the server received
}

func run(ctx context.Context, w io.Writer) (*report, error) {
	srv, err := startCatalogServer()
	if err != nil {
		return nil, err
	}
	defer srv.close()
	transport := &http.Transport{MaxIdleConnsPerHost: 4}
	defer transport.CloseIdleConnections()
	api := &catalogAPI{http: &http.Client{Transport: transport}, base: srv.URL()}

	rep := &report{Results: map[string]string{}}
	var mu sync.Mutex // guards rep and w: events and results come from several goroutines
	start := time.Now()
	reg, err := resilience.NewRegistry(resilience.WithEventListener(func(e policy.Event) {
		mu.Lock()
		defer mu.Unlock()
		rep.Events = append(rep.Events, e)
		fmt.Fprintf(w, "  %6.3fs  %s\n", time.Since(start).Seconds(), describe(e))
	}))
	if err != nil {
		return nil, err
	}

	// The specs in a scrambled order: the composition does not depend on it.
	search, err := resilience.Wrap1(reg, "CatalogAPI.Search", api.Search,
		resilience.Bulkhead(bulkhead.MaxConcurrent(slots)), // reject at once when full
		resilience.Timeout(callBudget),
		resilience.Fallback(func(ctx context.Context, err error) (string, error) {
			return "stale results from the cache", nil
		}),
		resilience.RateLimiter(ratelimit.Permits(3), ratelimit.Period(300*time.Millisecond),
			ratelimit.MaxWait(time.Second)),
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(retryDelay)),
		resilience.CircuitBreaker(
			circuitbreaker.SlidingWindowSize(6), circuitbreaker.MinimumCalls(6),
			circuitbreaker.FailureRateThreshold(50),
			circuitbreaker.WaitInOpen(waitInOpen), circuitbreaker.PermittedInHalfOpen(1),
			// Our own limiter and bulkhead turning calls away says nothing about the
			// API's health.
			circuitbreaker.IgnoreOn(ratelimit.ErrExceeded, bulkhead.ErrFull)))
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(w, "specs given: Bulkhead, Timeout, Fallback, RateLimiter, Retry, CircuitBreaker")
	fmt.Fprintln(w, "layers, outermost first: Fallback → Retry → CircuitBreaker → RateLimiter → Timeout → Bulkhead → CatalogAPI.Search")

	call := func(q string) {
		got, err := search(ctx, q)
		if err != nil {
			got = "error: " + err.Error()
		}
		mu.Lock()
		defer mu.Unlock()
		rep.Results[q] = got
		fmt.Fprintf(w, "  %6.3fs  search(%q) → %s\n", time.Since(start).Seconds(), q, got)
	}

	fmt.Fprintf(w, "\n4 calls at once: the rate limiter lets 3 through and makes 1 wait; the bulkhead takes %d, the retry tries the other again\n", slots)
	var wg sync.WaitGroup
	for _, q := range []string{"ok-1", "ok-2", "ok-3", "ok-4"} {
		wg.Go(func() { call(q) })
	}
	wg.Wait()

	// A quiet spell, so that the rate limiter's burst is back.
	if err := sleep(ctx, 300*time.Millisecond); err != nil {
		return nil, err
	}
	fmt.Fprintln(w, "\none call at a time: the retry saves the flaky and the slow calls; a service that is down opens the breaker, and the fallback answers")
	for _, q := range []string{"flaky-1", "slow-1", "down-1", "down-2"} {
		call(q)
	}

	if err := sleep(ctx, waitInOpen); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "\n%v later the breaker lets a trial call through, and closes again\n", waitInOpen)
	call("ok-5")

	rep.Requests = srv.Requests()
	fmt.Fprintf(w, "\nthe server received %d requests for %d calls\n", rep.Requests, len(rep.Results))
	return rep, nil
}

// describe formats an event without its clock time.
func describe(e policy.Event) string {
	s := e.Kind.String()
	if e.Kind == circuitbreaker.EventTransition {
		return s + " " + e.Attr("from").String() + " → " + e.Attr("to").String()
	}
	if e.Attempt > 0 {
		s += fmt.Sprintf(" attempt=%d", e.Attempt)
	}
	if e.Wait > 0 {
		s += fmt.Sprintf(" wait=%v", e.Wait.Round(time.Millisecond))
	}
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(" retry-after=%v", e.RetryAfter.Round(time.Millisecond))
	}
	if t := e.Attr("timeout"); t.Kind() == slog.KindDuration {
		s += fmt.Sprintf(" timeout=%v", t.Duration())
	}
	if e.Err != nil {
		s += " err=" + e.Err.Error()
	}
	return s
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// catalogAPI is the API's client.
type catalogAPI struct {
	http *http.Client
	base string
}

// Search calls GET /search?q=…; an answer other than 200 is an error.
func (a *catalogAPI) Search(ctx context.Context, q string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+"/search?q="+url.QueryEscape(q), nil)
	if err != nil {
		return "", err
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", &statusError{code: resp.StatusCode}
	}
	return string(body), nil
}

type statusError struct{ code int }

func (e *statusError) Error() string {
	return fmt.Sprintf("GET /search: %d %s", e.code, http.StatusText(e.code))
}
