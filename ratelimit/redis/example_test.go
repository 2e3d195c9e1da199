package redis_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
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

// Several windows on Redis: 10 calls per second and at most 1000 per day, for every
// instance together. Each window's TAT is one more key under the limiter's hash tag, and
// one script run decides all of them. (Not run: it needs a Redis server; the tests run
// windowsExample on theirs.)
func Example_windows() {
	client := goredis.NewClient(&goredis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	defer client.Close()
	windowsExample(os.Stdout, client, "search-service:")
}

// windowsExample builds a limiter of "10/1s, 1000/24h" on client, calls it 12 times at
// once, and prints what it admitted and the limiter's keys.
func windowsExample(w io.Writer, client goredis.UniversalClient, prefix string) {
	shared, err := rlredis.New(client, rlredis.Prefix(prefix))
	if err != nil {
		panic(err)
	}
	limiter, err := ratelimit.New(ratelimit.Name("search"), ratelimit.Permits(10), ratelimit.Period(time.Second),
		ratelimit.Windows("1000/24h"), ratelimit.WithBackend(shared))
	if err != nil {
		panic(err)
	}
	admitted := 0
	for range 12 {
		if limiter.TryAcquire() {
			admitted++
		}
	}
	fmt.Fprintf(w, "admitted %d of 12\n", admitted)
	ctx := context.Background()
	for _, key := range []string{"{" + prefix + "search}", "{" + prefix + "search}:win:1000:86400000000000"} {
		ttl := client.PTTL(ctx, key).Val()
		fmt.Fprintf(w, "%s expires in %v\n", strings.Replace(key, prefix, "", 1), ttl.Round(time.Second))
	}
}
