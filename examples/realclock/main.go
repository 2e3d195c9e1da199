// Command realclock is the README's quick start: it calls an HTTP API that allows 10
// requests per second, through a function wrapped with a rate limiter on the real clock,
// and counts the answers. The limiter keeps one request of the API's burst in reserve (9
// permits per 900ms: the same steady rate, one call every 100ms), so that the network's
// jitter never pushes a request over the quota, and lets each call wait up to MaxWait for
// its turn instead of failing. Every answer is 200; none is 429.
//
//	go run ./examples/realclock
//
// The API is a local server on 127.0.0.1 that enforces its quota with
// golang.org/x/time/rate. examples/quota is the longer version, with a timeline and the
// -reserve flag that shows the 429s of calling at exactly the quota.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"golang.org/x/time/rate"

	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// calls is how many calls run makes: a burst of 9, then one every 100ms.
const calls = 20

// run starts the API, calls it through the limiter and writes what it answered to w.
func run(ctx context.Context, w io.Writer) error {
	url, stop, err := startAPI()
	if err != nil {
		return err
	}
	defer stop()
	defer client.CloseIdleConnections()
	statuses := map[int]int{}

	// README:begin quickstart
	reg, err := resilience.NewRegistry() // on the real clock
	if err != nil {
		return err
	}
	// The API allows 10 requests per second: keep one of its burst in reserve (9 per
	// 900ms is still one call every 100ms), and let a call wait up to 2s for its turn.
	get, err := resilience.Wrap1(reg, "QuotaAPI.Get", getStatus,
		resilience.RateLimiter(ratelimit.Permits(9), ratelimit.Period(900*time.Millisecond),
			ratelimit.MaxWait(2*time.Second)))
	if err != nil {
		return err
	}
	for range calls {
		status, err := get(ctx, url) // waits for its permit, then calls the API
		if err != nil {
			return err
		}
		statuses[status]++
	}
	// README:end quickstart
	fmt.Fprintf(w, "%d calls: %d × 200, %d × 429\n", calls, statuses[200], statuses[429])
	return nil
}

// client is the HTTP client of the API.
var client = &http.Client{Timeout: 5 * time.Second}

// getStatus calls the API at url and returns the status of its answer.
func getStatus(ctx context.Context, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// startAPI starts a server on 127.0.0.1 that answers 200 within a quota of 10 requests
// per second (bursts of 10) and 429 above it, and returns its URL and the function that
// stops it.
func startAPI() (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	quota := rate.NewLimiter(10, 10)
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if !quota.Allow() {
				http.Error(w, "quota exceeded", http.StatusTooManyRequests)
				return
			}
			_, _ = io.WriteString(w, "ok\n")
		})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	return "http://" + ln.Addr().String() + "/", func() {
		_ = srv.Shutdown(context.Background())
		<-done
	}, nil
}
