// Command rediscluster shares one quota, 9 calls per second, among every instance of a
// service through a Redis Cluster, and shows what an instance does while the cluster does
// not answer: it limits itself to its share of the quota, 3 of the 9, since 3 instances
// are expected to share it. The cluster's masters are REDIS_CLUSTER_ADDRS
// (host:port,host:port,…).
//
//	REDIS_CLUSTER_ADDRS=10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379 go run ./examples/rediscluster
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	rlredis "github.com/resilience4go/resilience4go/ratelimit/redis"
	"github.com/resilience4go/resilience4go/resilience"
)

// prefix starts the Redis keys of this example's limiters: {rediscluster-example:geocoding}.
const prefix = "rediscluster-example:"

func geocode(ctx context.Context, address string) (string, error) { return "48.8566,2.3522", nil }

func main() {
	addrs := strings.Split(os.Getenv("REDIS_CLUSTER_ADDRS"), ",")
	if err := run(context.Background(), os.Stdout, addrs, clock.System()); err != nil {
		fmt.Fprintln(os.Stderr, "rediscluster:", err)
		os.Exit(1)
	}
}

// run makes 4 calls through a limiter of 9 per second shared through the cluster at addrs,
// on the clock clk (which times the calls to Redis that failed; Redis's own clock decides
// the permits).
func run(ctx context.Context, w io.Writer, addrs []string, clk clock.Clock) error {
	// README:begin cluster
	client := goredis.NewClusterClient(&goredis.ClusterOptions{
		Addrs:                 addrs,                  // the masters, or some of them
		ContextTimeoutEnabled: true,                   // Timeout bounds each call without a helper goroutine
		DialTimeout:           200 * time.Millisecond, // a stopped node holds the client's own
		ReadTimeout:           200 * time.Millisecond, // slot-map reloads no longer than this
		WriteTimeout:          200 * time.Millisecond,
	})
	defer client.Close()
	shared, err := rlredis.New(client,
		rlredis.Prefix(prefix),
		rlredis.OnFailure(backend.Local), // the cluster down: each instance limits itself…
		rlredis.Instances(3))             // …to a third of the quota, as 3 instances share it
	// README:end cluster
	if err != nil {
		return err
	}
	var failed atomic.Bool // set by a backend.EventFailed event
	reg, err := resilience.NewRegistry(resilience.WithClock(clk), resilience.WithRateLimiterBackend(shared),
		resilience.WithEventListener(func(e policy.Event) {
			if e.Kind == backend.EventFailed {
				failed.Store(true)
			}
		}))
	if err != nil {
		return err
	}
	limited, err := resilience.Wrap1(reg, "GeoAPI.Geocode", geocode,
		resilience.RateLimiter(ratelimit.Name("geocoding"), ratelimit.Permits(9), ratelimit.Period(time.Second)))
	if err != nil {
		return err
	}
	var results []string
	for range 4 {
		_, err := limited(ctx, "Paris")
		switch {
		case errors.Is(err, ratelimit.ErrExceeded):
			results = append(results, "refused")
		case err != nil:
			return err
		default:
			results = append(results, "passed")
		}
	}
	if failed.Load() {
		fmt.Fprintln(w, "the cluster did not answer (RateLimiterBackendFailed): this instance took its share, 3 of the 9")
	} else {
		fmt.Fprintln(w, "the cluster answered: the shared quota of 9 per second, in Redis")
	}
	fmt.Fprintf(w, "4 calls: %s\n", strings.Join(results, ", "))
	return nil
}
