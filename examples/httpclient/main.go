// Command httpclient calls a dependency that allows 10 requests per second through a
// resiliencehttp.NewTransport, over real HTTP on loopback.
//
// The client's own rate limiter keeps it under the quota: 25 requests in a burst are
// spaced out, and the dependency never answers 429. When the dependency is overloaded
// anyway and answers 429 with Retry-After: 2, the client waits exactly 2s and succeeds. A
// POST that meets a 503 is sent again, with the same body. When the retries are spent,
// the caller gets the last 503 as a response, body and all. When the dependency is down
// (500s), the circuit breaker opens and requests fail fast, without reaching it.
//
// Run it with:
//
//	go run ./examples/httpclient
//
// Client and dependency share a manual clock, so the output is the same on every run.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencehttp"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "httpclient:", err)
		os.Exit(1)
	}
}

// README:begin httpclient

// newClient is the dependency's client: within its quota of 10 requests per second,
// retrying 429, 503 and transport errors as Retry-After says, with a circuit breaker
// that counts 5xx (not 4xx) responses as failures, and a timeout per attempt.
func newClient(reg *resilience.Registry) (*http.Client, error) {
	transport, err := resiliencehttp.NewTransport(reg, "inventory", http.DefaultTransport, resiliencehttp.TransportConfig{},
		resilience.RateLimiter(ratelimit.Permits(10), ratelimit.Period(time.Second),
			ratelimit.MaxWait(2*time.Second)), // wait up to 2s for a permit
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(500*time.Millisecond)),
		resilience.CircuitBreaker(circuitbreaker.IgnoreOn(resiliencehttp.ErrNotFailure, ratelimit.ErrExceeded), circuitbreaker.SlidingWindowSize(20), circuitbreaker.MinimumCalls(10),
			circuitbreaker.WaitInOpen(30*time.Second)),
		resilience.Timeout(2*time.Second),
	)
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: transport}, nil
}

// README:end httpclient

// The dependency's moods.
const (
	normal     int32 = iota
	overloaded       // the next request gets 429 with Retry-After: 2
	flaky            // the next request gets 503, without Retry-After
	busy             // every request gets 503
	down             // every request gets 500
)

// dependency is the service the client calls: 10 requests per second per client,
// enforced with resiliencehttp.NewMiddleware on the shared clock.
type dependency struct {
	mood    atomic.Int32
	tooMany atomic.Int32 // 429s of its own rate limit
	mu      sync.Mutex
	bodies  []int // the body size of each request that reached the handler
}

// served returns how many requests reached the handler, and the body sizes of those from
// the n-th on.
func (d *dependency) served(n int) (int, []int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.bodies), append([]int(nil), d.bodies[min(n, len(d.bodies)):]...)
}

func (d *dependency) handler(clk clock.Clock) (http.Handler, error) {
	quota, err := keyed.New[string](ratelimit.Permits(10), ratelimit.Period(time.Second), ratelimit.WithClock(clk))
	if err != nil {
		return nil, err
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		d.mu.Lock()
		d.bodies = append(d.bodies, len(body))
		d.mu.Unlock()
		switch d.mood.Load() {
		case overloaded:
			d.mood.Store(normal)
			w.Header().Set("Retry-After", "2")
			http.Error(w, "overloaded", http.StatusTooManyRequests)
		case flaky:
			d.mood.Store(normal)
			http.Error(w, "try again", http.StatusServiceUnavailable)
		case busy:
			http.Error(w, "busy, try later", http.StatusServiceUnavailable)
		case down:
			http.Error(w, "database unreachable", http.StatusInternalServerError)
		default:
			fmt.Fprintln(w, "done")
		}
	})
	limit, err := resiliencehttp.NewMiddleware(quota, resiliencehttp.OnReject(
		func(w http.ResponseWriter, r *http.Request, retryAfter time.Duration) {
			d.tooMany.Add(1)
			http.Error(w, "quota exceeded", http.StatusTooManyRequests)
		}))
	if err != nil {
		return nil, err
	}
	return limit(h), nil
}

func run(ctx context.Context, w io.Writer) error {
	clk := clock.NewManual()
	dep := &dependency{}
	h, err := dep.handler(clk)
	if err != nil {
		return err
	}
	url, stop, err := start(h)
	if err != nil {
		return err
	}
	defer stop()
	defer http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	reg, err := resilience.NewRegistry(resilience.WithClock(clk))
	if err != nil {
		return err
	}
	client, err := newClient(reg)
	if err != nil {
		return err
	}
	since := func(t0 time.Duration) time.Duration { return clk.Now() - t0 }

	fmt.Fprintln(w, "25 requests in a burst, against a quota of 10 per second:")
	t0 := clk.Now()
	for range 25 {
		if _, _, err := call(ctx, client, http.MethodGet, url+"/items", ""); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "  all 200 OK, in %v of clock time: the client's limiter spaced them out; 429s from the dependency: %d\n",
		since(t0), dep.tooMany.Load())

	fmt.Fprintln(w, "the dependency is overloaded anyway, and answers 429 with Retry-After: 2:")
	clk.Advance(time.Second) // the client's quota is back
	dep.mood.Store(overloaded)
	t0 = clk.Now()
	n, _ := dep.served(0)
	status, _, err := call(ctx, client, http.MethodGet, url+"/items", "")
	if err != nil {
		return err
	}
	m, _ := dep.served(n)
	fmt.Fprintf(w, "  %s after %v of clock time, in %d requests\n", status, since(t0), m-n)

	fmt.Fprintln(w, "a POST meets a 503, without Retry-After (the retry waits its own 500ms):")
	dep.mood.Store(flaky)
	t0 = clk.Now()
	n, _ = dep.served(0)
	order := `{"item":"widget","qty":3}`
	status, _, err = call(ctx, client, http.MethodPost, url+"/orders", order)
	if err != nil {
		return err
	}
	_, sizes := dep.served(n)
	fmt.Fprintf(w, "  %s after %v; the dependency received the %d-byte body %d times: %v\n",
		status, since(t0), len(order), len(sizes), sizes)

	fmt.Fprintln(w, "the dependency stays busy, 503 every time:")
	dep.mood.Store(busy)
	n, _ = dep.served(0)
	status, body, err := call(ctx, client, http.MethodGet, url+"/items", "")
	if err != nil {
		return err
	}
	m, _ = dep.served(n)
	fmt.Fprintf(w, "  the retries are spent after %d requests; the caller gets the last response: %s %q\n", m-n, status, body)

	fmt.Fprintln(w, "the dependency is down, 500 every time:")
	dep.mood.Store(down)
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "inventory")
	if err != nil {
		return err
	}
	requests := 0
	for cb.Snapshot().State != circuitbreaker.Open {
		if status, body, err = call(ctx, client, http.MethodGet, url+"/items", ""); err != nil {
			return err
		}
		requests++
	}
	snap := cb.Snapshot()
	fmt.Fprintf(w, "  requests 1-%d: %s %q; the breaker's window: %d failures of %d calls\n",
		requests, status, body, snap.FailedCalls, snap.BufferedCalls)
	n, _ = dep.served(0)
	_, _, err = call(ctx, client, http.MethodGet, url+"/items", "")
	if !errors.Is(err, circuitbreaker.ErrOpen) {
		return fmt.Errorf("want the breaker's rejection, got %v", err)
	}
	if m, _ = dep.served(n); m != n {
		return errors.New("the open breaker let a request through")
	}
	fmt.Fprintf(w, "  the breaker is %s: the next request fails fast with circuitbreaker.ErrOpen, never reaching the dependency\n",
		cb.Snapshot().State)
	return nil
}

// call sends one request and returns its status and body.
func call(ctx context.Context, c *http.Client, method, url, body string) (status, respBody string, err error) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return "", "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", "", err
	}
	return resp.Status, strings.TrimSpace(string(b)), nil
}

// start serves h on a loopback port and returns its URL and the function that stops it.
func start(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	return "http://" + ln.Addr().String(), func() {
		_ = srv.Shutdown(context.Background())
		<-done
	}, nil
}
