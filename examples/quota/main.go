// Command quota calls an HTTP API that enforces a quota of 10 requests per second, through
// a function wrapped with resilience4go's rate limiter set to the same steady rate. The
// limiter lets a burst go at once and makes the rest wait for their turn, one every 100ms,
// so that the server never has to answer 429 Too Many Requests. (The client's burst is 9,
// not 10: it keeps one request of the server's burst in reserve for network jitter; see
// reserve, and run with -reserve 0 to see why.)
//
//	go run ./examples/quota
//
// The API is a local server on 127.0.0.1 that enforces its quota with
// golang.org/x/time/rate, an implementation independent of resilience4go's: the example
// shows that the two agree. A second phase uses a limiter that does not wait (maxWait 0):
// the calls above the burst fail at once with ratelimit.ErrExceeded and never reach the
// server.
//
// The command exits with status 1 if the server answered 429 even once.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// The quota, as the API documents it: 10 requests per second, bursts of 10.
const (
	quotaPerSecond = 10
	quotaBurst     = 10
)

// interval is the quota's steady rate: one request every 100ms.
const interval = time.Second / quotaPerSecond

// reserve is how many requests of the server's burst the client keeps in reserve. The
// client's limiter goes at exactly the quota's steady rate, one call every 100ms, with a
// burst of quotaBurst - reserve: 9 permits per 900ms by default.
//
// Why not 10 per second, the quota itself (-reserve 0)? Our GCRA and the server's token
// bucket agree exactly when they measure the same instants: both admit a burst of 10 and
// then the 11th call 100ms after the first. But they do not measure the same instants: the
// client's limiter decides when a call may start, the server counts when the request
// arrives, and in between each request spends a time that varies from call to call. The
// first request also opens a connection, so the server starts counting a millisecond or
// so late; any later request that gets there faster arrives that much early in the
// server's eyes, and at parity that is a 429: practically every run with -reserve 0 sees
// one. The token kept in reserve absorbs up to one emission interval (100ms) of such
// jitter, and costs nothing in throughput: the steady rate is still 10 per second.
var reserve = flag.Int("reserve", 1, "requests of the server's burst of 10 that the client keeps in reserve (0-9)")

// The two phases.
const (
	calls      = 60               // phase 1: calls that wait for their permit
	goroutines = 4                // callers sharing the limiter
	maxWait    = 10 * time.Second // long enough for every caller to queue
	quickCalls = 20               // phase 2: calls that do not wait (maxWait 0)
	bucket     = 100 * time.Millisecond
)

func main() {
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := run(ctx, os.Stdout, *reserve)
	if err != nil {
		fmt.Fprintln(os.Stderr, "quota:", err)
		os.Exit(1)
	}
	if rep.TooMany > 0 || rep.QuickTooMany > 0 {
		fmt.Fprintln(os.Stderr, "quota: the server answered 429: the client went over the quota")
		os.Exit(1)
	}
}

// report is what run observed.
type report struct {
	Permits int           // the client limiter's permits: its burst
	Period  time.Duration // the client limiter's period

	// Phase 1.
	Admitted []time.Duration // when each call was admitted, since the phase began, sorted
	AtOnce   int             // calls admitted at once (the burst)
	Waited   int             // calls that waited for their permit (ratelimit.EventWaited events)
	Elapsed  time.Duration   // from the first call to the last answer
	OK       int             // 200 answers the server sent
	TooMany  int             // 429 answers the server sent

	// Phase 2.
	QuickAdmitted int // calls the limiter let through
	QuickRejected int // calls rejected at once with ratelimit.ErrExceeded
	QuickServer   int // requests the server received
	QuickTooMany  int // 429 answers the server sent
}

// run starts the quota server, runs both phases against it, with a client that keeps
// reserve requests of the server's burst in reserve, and writes what happened to w.
func run(ctx context.Context, w io.Writer, reserve int) (*report, error) {
	if reserve < 0 || reserve >= quotaBurst {
		return nil, fmt.Errorf("reserve %d: want 0 to %d", reserve, quotaBurst-1)
	}
	rep := &report{Permits: quotaBurst - reserve}
	rep.Period = time.Duration(rep.Permits) * interval
	srv, err := startQuotaServer()
	if err != nil {
		return nil, err
	}
	defer srv.close()
	transport := &http.Transport{MaxIdleConnsPerHost: goroutines}
	defer transport.CloseIdleConnections()
	httpClient := &http.Client{Transport: transport, Timeout: 10 * time.Second}

	// Count the waits and rejections of each limiter from the registry's events. Admitted
	// calls that did not wait publish nothing.
	var events eventCounts
	reg, err := resilience.NewRegistry(resilience.WithEventListener(events.record))
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "server: %s allows %d requests per second per API key, bursts of %d (golang.org/x/time/rate); 429 above\n",
		srv.URL(), int(serverRate), serverBurst)

	if err := waitingPhase(ctx, w, reg, &events, &searchAPI{http: httpClient, base: srv.URL(), key: "phase-1"}, rep); err != nil {
		return nil, err
	}
	rep.OK, rep.TooMany = srv.stats("phase-1")
	fmt.Fprintf(w, "server: %d × 200, %d × 429\n", rep.OK, rep.TooMany)

	if err := quickPhase(ctx, w, reg, &events, &searchAPI{http: httpClient, base: srv.URL(), key: "phase-2"}, rep); err != nil {
		return nil, err
	}
	ok, tooMany := srv.stats("phase-2")
	rep.QuickServer, rep.QuickTooMany = ok+tooMany, tooMany
	fmt.Fprintf(w, "server: received %d requests (%d × 200, %d × 429); the %d rejected calls never reached it\n",
		rep.QuickServer, ok, tooMany, rep.QuickRejected)
	return rep, nil
}

// waitingPhase makes calls from several goroutines through a limiter that waits up to
// maxWait, and prints when they were admitted.
func waitingPhase(ctx context.Context, w io.Writer, reg *resilience.Registry, events *eventCounts, api *searchAPI, rep *report) error {
	clk := clock.System() // the registry's: it was built without WithClock
	var (
		mu       sync.Mutex
		admitted []time.Duration
		start    time.Duration
	)
	search, err := resilience.Wrap1(reg, "SearchAPI.Search",
		func(ctx context.Context, q string) (string, error) {
			at := clk.Now() - start // the rate limiter has admitted this call
			mu.Lock()
			admitted = append(admitted, at)
			mu.Unlock()
			return api.Search(ctx, q)
		},
		resilience.RateLimiter(
			ratelimit.Permits(rep.Permits),
			ratelimit.Period(rep.Period),
			ratelimit.MaxWait(maxWait)))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nphase 1: %d calls from %d goroutines; client limiter %d per %v (one every %v, %d of the burst in reserve), maxWait %v\n",
		calls, goroutines, rep.Permits, rep.Period, interval, quotaBurst-rep.Permits, maxWait)

	start = clk.Now()
	err = fanOut(ctx, calls, func(ctx context.Context, i int) error {
		_, err := search(ctx, fmt.Sprint("q", i))
		if errors.Is(err, errTooManyRequests) {
			return nil // counted by the server
		}
		return err
	})
	rep.Elapsed = clk.Now() - start
	if err != nil {
		return err
	}
	slices.Sort(admitted)
	rep.Admitted = admitted
	rep.Waited = events.count("SearchAPI.Search", ratelimit.EventWaited)
	rep.AtOnce = len(admitted) - rep.Waited

	fmt.Fprintf(w, "calls admitted per %v, since the phase began:\n", bucket)
	for i, n := range timeline(admitted, bucket) {
		fmt.Fprintf(w, "%5.1fs %-*s %d\n", (time.Duration(i) * bucket).Seconds(), quotaBurst, strings.Repeat("#", n), n)
	}
	fmt.Fprintf(w, "admitted at once: %d; waited for their permit: %d (RateLimiterWaited events)\n", rep.AtOnce, rep.Waited)
	fmt.Fprintf(w, "total time: %.1fs (%d at once, then one every %v)\n",
		rep.Elapsed.Seconds(), rep.Permits, interval)
	return nil
}

// quickPhase makes calls as fast as it can through a limiter that does not wait: the
// calls above the quota are rejected by the client itself.
func quickPhase(ctx context.Context, w io.Writer, reg *resilience.Registry, events *eventCounts, api *searchAPI, rep *report) error {
	search, err := resilience.Wrap1(reg, "SearchAPI.SearchNow", api.Search,
		resilience.RateLimiter(ratelimit.Permits(rep.Permits), ratelimit.Period(rep.Period))) // maxWait 0
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nphase 2: %d calls at once from %d goroutines; client limiter %d per %v, maxWait 0 (a new API key)\n",
		quickCalls, goroutines, rep.Permits, rep.Period)
	var admitted, rejected atomic.Int64
	err = fanOut(ctx, quickCalls, func(ctx context.Context, i int) error {
		_, err := search(ctx, fmt.Sprint("now", i))
		switch {
		case errors.Is(err, ratelimit.ErrExceeded):
			rejected.Add(1) // the server never sees this call
			return nil
		case errors.Is(err, errTooManyRequests):
			admitted.Add(1) // counted by the server
			return nil
		case err != nil:
			return err
		}
		admitted.Add(1)
		return nil
	})
	if err != nil {
		return err
	}
	rep.QuickAdmitted, rep.QuickRejected = int(admitted.Load()), int(rejected.Load())
	fmt.Fprintf(w, "admitted: %d; rejected at once by the client: %d (ratelimit.ErrExceeded, %d RateLimiterRejected events)\n",
		rep.QuickAdmitted, rep.QuickRejected, events.count("SearchAPI.SearchNow", ratelimit.EventRejected))
	return nil
}

// fanOut calls fn(ctx, i) for i in 1..n from several goroutines, and returns the first
// error.
func fanOut(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		errMu sync.Mutex
		first error
	)
	for range goroutines {
		wg.Go(func() {
			for {
				i := int(next.Add(1))
				if i > n {
					return
				}
				if err := fn(ctx, i); err != nil {
					errMu.Lock()
					if first == nil {
						first = err
					}
					errMu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// timeline counts the admission times (sorted) in consecutive buckets of width d.
func timeline(admitted []time.Duration, d time.Duration) []int {
	if len(admitted) == 0 {
		return nil
	}
	counts := make([]int, int(admitted[len(admitted)-1]/d)+1)
	for _, at := range admitted {
		counts[at/d]++
	}
	return counts
}

// eventCounts counts the registry's events by instance and kind.
type eventCounts struct {
	mu     sync.Mutex
	counts map[string]map[policy.EventKind]int
}

func (c *eventCounts) record(e policy.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[string]map[policy.EventKind]int{}
	}
	if c.counts[e.Instance] == nil {
		c.counts[e.Instance] = map[policy.EventKind]int{}
	}
	c.counts[e.Instance][e.Kind]++
}

func (c *eventCounts) count(instance string, kind policy.EventKind) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[instance][kind]
}

// errTooManyRequests is the API's 429 answer.
var errTooManyRequests = errors.New("429 Too Many Requests")

// searchAPI is the API's client.
type searchAPI struct {
	http *http.Client
	base string
	key  string
}

// Search calls GET /search?q=… with the client's API key.
func (a *searchAPI) Search(ctx context.Context, q string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+"/search?q="+url.QueryEscape(q), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("X-API-Key", a.key)
	resp, err := a.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return string(body), nil
	case http.StatusTooManyRequests:
		return "", errTooManyRequests
	}
	return "", fmt.Errorf("GET /search: %s", resp.Status)
}
