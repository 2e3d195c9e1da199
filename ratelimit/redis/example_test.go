package redis_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	rlredis "github.com/resilience4go/resilience4go/ratelimit/redis"
	"github.com/resilience4go/resilience4go/resilience"
)

// Every instance of a service builds its registry with the same Redis backend: the
// limiter "geocoding" is then 10 calls per second for all of them together. (Not run:
// it needs a Redis server.)
func Example() {
	client := goredis.NewClient(&goredis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	defer client.Close()

	shared, err := rlredis.New(client,
		rlredis.Prefix("search-service:"),    // keys {search-service:<limiter name>}
		rlredis.Timeout(50*time.Millisecond), // per call to Redis
		rlredis.OnFailure(backend.Local))     // Redis down: each instance limits itself
	if err != nil {
		panic(err)
	}
	reg, err := resilience.NewRegistry(resilience.WithRateLimiterBackend(shared))
	if err != nil {
		panic(err)
	}
	geocode, err := resilience.Wrap1(reg, "GeoAPI.Geocode",
		func(ctx context.Context, address string) (string, error) { return "48.85,2.35", nil },
		resilience.RateLimiter(ratelimit.Name("geocoding"), ratelimit.Permits(10), ratelimit.Period(time.Second)))
	if err != nil {
		panic(err)
	}

	pos, err := geocode(context.Background(), "Paris")
	if errors.Is(err, ratelimit.ErrExceeded) {
		fmt.Println("over the shared quota")
		return
	}
	fmt.Println(pos, err)
}

// A limiter built on its own, without a registry.
func ExampleNew() {
	client := goredis.NewClient(&goredis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	defer client.Close()
	shared, err := rlredis.New(client)
	if err != nil {
		panic(err)
	}
	limiter, err := ratelimit.New(ratelimit.Name("geocoding"), ratelimit.Permits(10), ratelimit.Period(time.Second),
		ratelimit.MaxWait(200*time.Millisecond), ratelimit.WithBackend(shared))
	if err != nil {
		panic(err)
	}
	if r, err := limiter.Reserve(); err != nil {
		fmt.Println("retry after", r.Delay()) // SPEC RL-9b, on the server's clock
	}
}

// On a Redis Cluster: the same backend on a cluster client. Each node's failure takes only
// its own keys to the failure policy, and with Instances(3) the three instances of the
// service, each limiting itself while Redis is down, together stay near the shared quota.
// (Not run: it needs a cluster.)
func Example_cluster() {
	// README:begin cluster
	client := goredis.NewClusterClient(&goredis.ClusterOptions{
		Addrs:                 []string{"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"},
		ContextTimeoutEnabled: true,                   // Timeout bounds each call without a helper goroutine
		DialTimeout:           200 * time.Millisecond, // a stopped node holds the client's own
		ReadTimeout:           200 * time.Millisecond, // slot-map reloads no longer than this
		WriteTimeout:          200 * time.Millisecond,
	})
	defer client.Close()
	shared, err := rlredis.New(client, rlredis.OnFailure(backend.Local), rlredis.Instances(3))
	// README:end cluster
	if err != nil {
		panic(err)
	}
	limiter, err := ratelimit.New(ratelimit.Name("geocoding"), ratelimit.Permits(30), ratelimit.Period(time.Second),
		ratelimit.WithBackend(shared))
	if err != nil {
		panic(err)
	}
	fmt.Println(limiter.TryAcquire())
}
