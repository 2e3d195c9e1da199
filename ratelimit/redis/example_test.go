package redis_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/resilience4go/resilience4go/ratelimit"
	rlredis "github.com/resilience4go/resilience4go/ratelimit/redis"
	"github.com/resilience4go/resilience4go/resilience"
)

// Every instance of a service builds its registry with the same Redis backend: the
// limiter "geocoding" is then 10 calls per second for all of them together. (Not run:
// it needs a Redis server.)
func Example() {
	client := goredis.NewClient(&goredis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	defer client.Close()

	backend, err := rlredis.New(client,
		rlredis.Prefix("search-service:"),    // keys {search-service:<limiter name>}
		rlredis.Timeout(50*time.Millisecond), // per call to Redis
		rlredis.OnFailure(rlredis.Local))     // Redis down: each instance limits itself
	if err != nil {
		panic(err)
	}
	reg, err := resilience.NewRegistry(resilience.WithRateLimiterBackend(backend))
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
	backend, err := rlredis.New(client)
	if err != nil {
		panic(err)
	}
	limiter, err := ratelimit.New(ratelimit.Name("geocoding"), ratelimit.Permits(10), ratelimit.Period(time.Second),
		ratelimit.MaxWait(200*time.Millisecond), ratelimit.WithBackend(backend))
	if err != nil {
		panic(err)
	}
	if r, err := limiter.Reserve(); err != nil {
		fmt.Println("retry after", r.Delay()) // SPEC RL-9b, on the server's clock
	}
}
