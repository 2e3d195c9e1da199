// Command redis shares one rate limit among every instance of a service through Redis:
// run it several times at once against the same server, and together they make at most
// 10 calls per second. The server is REDIS_ADDR, or localhost:6379.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	rlredis "github.com/resilience4go/resilience4go/ratelimit/redis"
	"github.com/resilience4go/resilience4go/resilience"
)

func geocode(ctx context.Context, address string) (string, error) { return "48.8566,2.3522", nil }

func main() {
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		addr = "localhost:6379"
	}
	if err := run(context.Background(), os.Stdout, addr); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, w io.Writer, addr string) error {
	// README:begin redis
	client := goredis.NewClient(&goredis.Options{Addr: addr, ContextTimeoutEnabled: true})
	defer client.Close()

	shared, err := rlredis.New(client,
		rlredis.Prefix("search-service:"),    // keys {search-service:<limiter name>}
		rlredis.Timeout(50*time.Millisecond), // per call to Redis
		rlredis.OnFailure(backend.Local))     // Redis down: each instance limits itself
	if err != nil {
		return err
	}
	var redisDown atomic.Bool // set when Redis does not answer and the local fallback decides
	reg, err := resilience.NewRegistry(resilience.WithRateLimiterBackend(shared),
		resilience.WithEventListener(func(e policy.Event) {
			if e.Kind == backend.EventFailed {
				redisDown.Store(true)
			}
		}))
	if err != nil {
		return err
	}
	limited, err := resilience.Wrap1(reg, "GeoAPI.Geocode", geocode,
		resilience.RateLimiter(ratelimit.Name("geocoding"), ratelimit.Permits(10), ratelimit.Period(time.Second)))
	if err != nil {
		return err
	}

	pos, err := limited(ctx, "Paris")
	switch {
	case errors.Is(err, ratelimit.ErrExceeded):
		fmt.Fprintln(w, "over the shared quota of 10 per second")
	case err != nil:
		return err
	default:
		fmt.Fprintln(w, pos)
	}
	if redisDown.Load() {
		fmt.Fprintln(w, "(Redis did not answer: this instance limited itself)")
	}
	// README:end redis
	return nil
}
