// Command httpserver limits each client of an HTTP service to 10 requests per second with
// resiliencehttp.NewMiddleware, over real HTTP on loopback.
//
// Served directly, a client is the address of its connection, and a forged
// X-Forwarded-For header changes nothing. Behind a trusted load balancer,
// X-Forwarded-For names the client: one client's 11th request within a second is
// answered 429 with Retry-After and the RateLimit fields, and another client is
// unaffected. An IPv6 client is its /64 network: rotating through the addresses of its
// /64 does not give it more requests.
//
// Run it with:
//
//	go run ./examples/httpserver
//
// It runs on a manual clock, so its output is the same on every run.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	"github.com/resilience4go/resilience4go/resiliencehttp"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "httpserver:", err)
		os.Exit(1)
	}
}

// README:begin httpserver

// maxClients is how many clients the per-client limiter holds at most.
const maxClients = 100_000

// newService is the service: /api/items limited per client, /healthz exempt. proxies are
// the load balancers in front of it, whose X-Forwarded-For header names the client; none
// when it is served directly.
func newService(clk clock.Clock, proxies ...netip.Prefix) (http.Handler, *keyed.Limiter[string], error) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/items", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, `["widget","gadget"]`)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	})

	perClient, err := keyed.New[string](
		ratelimit.Permits(10), ratelimit.Period(time.Second), // 10 requests per second per client
		keyed.Bounds(maxClients, 0), // memory for 100,000 clients at most (about 7 MB)
		ratelimit.WithClock(clk),    // leave out for the system clock
	)
	if err != nil {
		return nil, nil, err
	}
	limit, err := resiliencehttp.NewMiddleware(perClient,
		resiliencehttp.TrustedProxies(proxies...), // X-Forwarded-For is read only from these
		resiliencehttp.Exempt("/healthz"),
	)
	if err != nil {
		return nil, nil, err
	}
	return limit(mux), perClient, nil
}

// README:end httpserver

func run(ctx context.Context, w io.Writer) error {
	clk := clock.NewManual()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	// Served directly: the client is the connection's address, 127.0.0.1.
	h, _, err := newService(clk)
	if err != nil {
		return err
	}
	url, stop, err := start(h)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Fprintln(w, "served directly: 10 requests per second per client")
	for i := 1; i <= 10; i++ {
		if _, err := expect(ctx, client, url+"/api/items", http.StatusOK); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "  requests 1-10 from 127.0.0.1: 200 OK")
	resp, err := expect(ctx, client, url+"/api/items", http.StatusTooManyRequests, "X-Forwarded-For", "198.51.100.99")
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "  request 11, with a forged X-Forwarded-For: 429 Too Many Requests")
	for _, name := range []string{"Retry-After", "RateLimit-Policy", "RateLimit"} {
		fmt.Fprintf(w, "    %s: %s\n", name, resp.Header.Get(name))
	}
	if _, err := expect(ctx, client, url+"/healthz", http.StatusOK); err != nil {
		return err
	}
	fmt.Fprintln(w, "  GET /healthz: 200 OK (exempt)")
	clk.Advance(100 * time.Millisecond)
	if _, err := expect(ctx, client, url+"/api/items", http.StatusOK); err != nil {
		return err
	}
	fmt.Fprintln(w, "  100ms later: 200 OK (one permit every 100ms)")

	// Behind a load balancer at 127.0.0.1, which writes X-Forwarded-For.
	h, perClient, err := newService(clk, netip.MustParsePrefix("127.0.0.1/32"))
	if err != nil {
		return err
	}
	url, stop2, err := start(h)
	if err != nil {
		return err
	}
	defer stop2()
	fmt.Fprintln(w, "behind a trusted load balancer (127.0.0.1/32):")
	for i := 1; i <= 10; i++ {
		if _, err := expect(ctx, client, url+"/api/items", http.StatusOK, "X-Forwarded-For", "203.0.113.7"); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "  requests 1-10 from 203.0.113.7: 200 OK")
	resp, err = expect(ctx, client, url+"/api/items", http.StatusTooManyRequests, "X-Forwarded-For", "203.0.113.7")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  request 11 from 203.0.113.7: 429 Too Many Requests, Retry-After: %s, RateLimit: %s\n",
		resp.Header.Get("Retry-After"), resp.Header.Get("RateLimit"))
	if _, err := expect(ctx, client, url+"/api/items", http.StatusOK, "X-Forwarded-For", "198.51.100.4"); err != nil {
		return err
	}
	fmt.Fprintln(w, "  request 1 from 198.51.100.4: 200 OK (another client is unaffected)")
	for i := 1; i <= 10; i++ {
		xff := fmt.Sprintf("2001:db8:7:1::%x", i)
		if _, err := expect(ctx, client, url+"/api/items", http.StatusOK, "X-Forwarded-For", xff); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "  requests 1-10 from 2001:db8:7:1::1 to ::a, one address each: 200 OK")
	if _, err := expect(ctx, client, url+"/api/items", http.StatusTooManyRequests, "X-Forwarded-For", "2001:db8:7:1::b"); err != nil {
		return err
	}
	fmt.Fprintln(w, "  request 11 from 2001:db8:7:1::b: 429 Too Many Requests (one /64, one quota)")
	fmt.Fprintf(w, "  clients held: %d, of at most %d\n", perClient.Len(), maxClients)
	return nil
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

// expect sends a GET with the header pairs and checks its status; the body is read and
// closed.
func expect(ctx context.Context, c *http.Client, url string, status int, header ...string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != status {
		return nil, errors.New(url + ": " + resp.Status + ", want " + http.StatusText(status))
	}
	return resp, nil
}
