// Command quotaclient calls two APIs that enforce a quota of 10 requests per second, one
// over HTTP and one over gRPC, through clients that keep within it: resiliencehttp's
// transport and resiliencegrpc's client interceptors, each with a rate limiter on the
// real clock that waits for its permit (maxWait) instead of failing. Each limiter goes at
// the quota's steady rate, one request every 100ms, but keeps one request of the burst in
// reserve (9 permits per 900ms): a client at exactly the quota gets 429s from the
// network's jitter (go run ./examples/quota -reserve 0 shows it).
//
//	go run ./examples/quotaclient
//
// Both servers are local, on 127.0.0.1, and enforce their quota with golang.org/x/time/rate,
// an implementation independent of resilience4go's. Each run takes about 2.5s: a burst of
// 9, then one request every 100ms. The command exits with status 1 if a server refused a
// request.
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
	"github.com/resilience4go/resilience4go/resiliencehttp"
)

// requests is how many requests each client makes, from goroutines callers at once.
const (
	requests = 20
	callers  = 4
)

func main() {
	rep, err := run(context.Background(), os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "quotaclient:", err)
		os.Exit(1)
	}
	if rep.HTTPRefused > 0 || rep.GRPCRefused > 0 {
		fmt.Fprintln(os.Stderr, "quotaclient: a server refused a request: the client went over its quota")
		os.Exit(1)
	}
}

// report is what the servers saw, and how long each client took.
type report struct {
	HTTPOK, HTTPRefused int // 200 and 429 answers of the HTTP server
	GRPCOK, GRPCRefused int // OK and ResourceExhausted answers of the gRPC server
	HTTPTook, GRPCTook  time.Duration
}

// newHTTPClient is the HTTP API's client. next is the transport underneath (nil:
// http.DefaultTransport).
func newHTTPClient(reg *resilience.Registry, next http.RoundTripper) (*http.Client, error) {
	// README:begin http-client
	// The API allows 10 requests per second, in bursts of 10. The client keeps its steady
	// rate, one request every 100ms, and one request of the burst in reserve: 9 per 900ms.
	// A request waits up to 5s for its permit rather than fail.
	transport, err := resiliencehttp.NewTransport(reg, "SearchAPI", next, resiliencehttp.TransportConfig{},
		resilience.RateLimiter(
			ratelimit.Permits(9), ratelimit.Period(900*time.Millisecond),
			ratelimit.MaxWait(5*time.Second)),
		// A 429 anyway (the quota is shared with someone else): try again when
		// Retry-After says, within the same limiter.
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(time.Second)),
	)
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: transport}, nil
	// README:end http-client
}

// newGRPCClient is the gRPC API's connection, whose calls go through a client that keeps
// within its quota.
func newGRPCClient(reg *resilience.Registry, target string) (*grpc.ClientConn, error) {
	// README:begin grpc-client
	// The same quota over gRPC: the interceptors take a permit for each call, waiting up
	// to 5s for it. A retry retries only the methods said to be idempotent.
	guard, err := resiliencegrpc.NewClient(reg, "HealthAPI",
		resiliencegrpc.ClientConfig{Idempotent: []string{"/grpc.health.v1.Health/"}},
		resilience.RateLimiter(
			ratelimit.Permits(9), ratelimit.Period(900*time.Millisecond),
			ratelimit.MaxWait(5*time.Second)),
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(time.Second)),
	)
	if err != nil {
		return nil, err
	}
	return grpc.NewClient(target,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(guard.UnaryInterceptor()),
		grpc.WithChainStreamInterceptor(guard.StreamInterceptor()))
	// README:end grpc-client
}

// run starts both servers, makes the requests through both clients, and writes what the
// servers answered to w.
func run(ctx context.Context, w io.Writer) (*report, error) {
	// The real clock: the registry is built without WithClock.
	reg, err := resilience.NewRegistry()
	if err != nil {
		return nil, err
	}
	rep := &report{}

	hs, err := startHTTPServer()
	if err != nil {
		return nil, err
	}
	defer hs.close()
	next := &http.Transport{MaxIdleConnsPerHost: callers}
	defer next.CloseIdleConnections()
	client, err := newHTTPClient(reg, next)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "HTTP: %d requests from %d goroutines, client limiter 9 per 900ms, maxWait 5s\n", requests, callers)
	start := time.Now()
	err = fanOut(func() error {
		resp, err := client.Get(hs.url + "/search?q=go")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	})
	rep.HTTPTook = time.Since(start)
	if err != nil {
		return nil, err
	}
	rep.HTTPOK, rep.HTTPRefused = hs.stats()
	fmt.Fprintf(w, "  the server answered %d × 200 OK, %d × 429 Too Many Requests\n", rep.HTTPOK, rep.HTTPRefused)

	gs, err := startGRPCServer()
	if err != nil {
		return nil, err
	}
	defer gs.close()
	conn, err := newGRPCClient(reg, gs.addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	health := healthpb.NewHealthClient(conn)
	fmt.Fprintf(w, "gRPC: %d calls from %d goroutines, client limiter 9 per 900ms, maxWait 5s\n", requests, callers)
	start = time.Now()
	err = fanOut(func() error {
		_, err := health.Check(ctx, &healthpb.HealthCheckRequest{})
		return err
	})
	rep.GRPCTook = time.Since(start)
	if err != nil {
		return nil, err
	}
	rep.GRPCOK, rep.GRPCRefused = gs.stats()
	fmt.Fprintf(w, "  the server answered %d × OK, %d × ResourceExhausted\n", rep.GRPCOK, rep.GRPCRefused)
	return rep, nil
}

// fanOut calls fn requests times from callers goroutines, and returns the first error.
func fanOut(fn func() error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		left  = requests
		first error
	)
	for range callers {
		wg.Go(func() {
			for {
				mu.Lock()
				if left == 0 || first != nil {
					mu.Unlock()
					return
				}
				left--
				mu.Unlock()
				if err := fn(); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return first
}
