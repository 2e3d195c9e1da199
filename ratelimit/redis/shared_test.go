package redis_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	rlredis "github.com/resilience4go/resilience4go/ratelimit/redis"
	"github.com/resilience4go/resilience4go/resilience"
)

// SPEC RL-5, RL-15: three registries, standing for three instances of a service, each
// with its own Redis client, wrap a function with the rate limiter "geocoding": 10 per
// second in total. 8 goroutines per registry call it for 3s. Together they never exceed
// the window bound Permits + floor(elapsed/T) measured over the run, and they are
// admitted at least 80% of it.
func TestRL5_ThreeRegistriesShareOneQuota(t *testing.T) {
	onEach(t, func(t *testing.T) {
		prefix := rlredis.UniquePrefix(t)
		const (
			permits    = 10
			period     = time.Second
			goroutines = 8
			run        = 3 * time.Second
		)
		var calls []func(context.Context) (int, error)
		var failures atomic.Int64
		var regs []*resilience.Registry
		for range 3 {
			c := testClient(t)
			requireServer(t, c)
			// A generous timeout: this test is about sharing, not about failing over (a loaded
			// machine can be slower than the 50ms default, and a fallback limits per instance).
			b, err := rlredis.New(c, rlredis.Prefix(prefix), rlredis.Timeout(5*time.Second))
			require.NoError(t, err)
			reg, err := resilience.NewRegistry(resilience.WithRateLimiterBackend(b),
				resilience.WithEventListener(func(e policy.Event) {
					if e.Kind == backend.EventFailed {
						failures.Add(1)
					}
				}))
			require.NoError(t, err)
			call, err := resilience.Wrap(reg, "GeoAPI.Geocode",
				func(context.Context) (int, error) { return 1, nil },
				resilience.RateLimiter(ratelimit.Name("geocoding"), ratelimit.Permits(permits), ratelimit.Period(period)))
			require.NoError(t, err)
			calls = append(calls, call)
			regs = append(regs, reg)
		}

		var admitted, rejected atomic.Int64
		var other sync.Map
		var wg sync.WaitGroup
		start := time.Now()
		stop := start.Add(run)
		for _, call := range calls {
			for range goroutines {
				wg.Go(func() {
					ctx := context.Background()
					for time.Now().Before(stop) {
						_, err := call(ctx)
						switch {
						case err == nil:
							admitted.Add(1)
						case errors.Is(err, ratelimit.ErrExceeded):
							rejected.Add(1)
						default:
							other.Store(err.Error(), true)
						}
					}
				})
			}
		}
		wg.Wait()
		elapsed := time.Since(start)
		other.Range(func(k, _ any) bool { t.Errorf("unexpected error: %v", k); return true })
		require.Zero(t, failures.Load(), "Redis failed during the run: the instances fell back to local limits")

		T := period / permits
		bound := int64(permits) + int64(elapsed/T)
		got := admitted.Load()
		t.Logf("admitted %d, rejected %d, bound %d over %v", got, rejected.Load(), bound, elapsed)
		assert.LessOrEqual(t, got, bound, "RL-5 over %v, all instances together", elapsed)
		// At least 80% of what the span in which calls were started allows: a loaded
		// machine can stretch elapsed with calls that return late, and no call starts
		// after stop to use that time.
		low := int64(permits) + int64(run/T)
		assert.GreaterOrEqual(t, float64(got), 0.8*float64(low), "admitted %d of %d", got, low)
		assert.Positive(t, rejected.Load())

		for _, reg := range regs {
			h, err := reg.RateLimiter("geocoding")
			require.NoError(t, err)
			assert.LessOrEqual(t, h.Snapshot().AvailablePermits, permits)
		}
	})
}
