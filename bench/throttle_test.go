package bench

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	fsat "github.com/failsafe-go/failsafe-go/adaptivethrottler"

	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy/throttle"
	"github.com/resilience4go/resilience4go/resilience"
)

// The throttles compared, configured alike, in front of a healthy backend (every call
// succeeds), so that every call is admitted: the SRE book's client-side throttling with
// K 2 over a one-minute window and a rejection probability capped at 0.9. Ours is K(2),
// Window(1m) and MaxRejection(0.9), its defaults; failsafe-go's adaptivethrottler is
// WithFailureRateThreshold(0.5, 0, 1m), whose most executions allowed, successes / (1 −
// 0.5), is 2 × successes, and WithMaxRejectionRate(0.9), its default.
const throttleWindow = time.Minute

func oursThrottle(b *testing.B) *throttle.Throttle {
	b.Helper()
	t, err := throttle.New(throttle.K(2), throttle.Window(throttleWindow), throttle.MaxRejection(0.9))
	if err != nil {
		b.Fatal(err)
	}
	return t
}

func failsafeThrottler() fsat.AdaptiveThrottler[int] {
	return fsat.NewBuilder[int]().WithFailureRateThreshold(0.5, 0, throttleWindow).WithMaxRejectionRate(0.9).Build()
}

// throttleCases are the admitted paths measured: each returns whether the call was
// admitted and succeeded.
func throttleCases() []breakerCase {
	ctx := context.Background()
	return []breakerCase{
		{"resilience4go/DecorateFunc/admitted", func(b *testing.B) func() bool {
			call := throttle.Decorate[decorate.Func[int, int], int, int](oursThrottle(b), tripping)
			return func() bool { _, err := call(ctx, 1); return err == nil }
		}},
		{"resilience4go/Wrap1/throttle/admitted", func(b *testing.B) func() bool {
			call, err := resilience.Wrap1(newRegistry(b), "Bench.Call", tripping,
				resilience.Throttle(throttle.K(2), throttle.Window(throttleWindow), throttle.MaxRejection(0.9)))
			if err != nil {
				b.Fatal(err)
			}
			return func() bool { _, err := call(ctx, 1); return err == nil }
		}},
		{"failsafe/Get/adaptivethrottler/admitted", func(*testing.B) func() bool {
			exec := failsafe.With[int](failsafeThrottler())
			return func() bool { _, err := exec.Get(one); return err == nil }
		}},
		{"failsafe/TryAcquirePermit+RecordSuccess/admitted", func(*testing.B) func() bool {
			t := failsafeThrottler()
			return func() bool {
				if !t.TryAcquirePermit() {
					return false
				}
				if _, err := one(); err != nil {
					t.RecordFailure()
					return false
				}
				t.RecordSuccess()
				return true
			}
		}},
	}
}

// BenchmarkThrottle measures one admitted call through each throttle, by one goroutine,
// after a warm-up that fills the window with successes.
func BenchmarkThrottle(b *testing.B) {
	for _, c := range throttleCases() {
		b.Run(c.name, func(b *testing.B) {
			call := c.newCall(b)
			warmBreaker(call)
			var misses int64
			b.ReportAllocs()
			for b.Loop() {
				if !call() {
					misses++
				}
			}
			reportMisses(b, misses)
		})
	}
}

// BenchmarkThrottleParallel is BenchmarkThrottle with one goroutine per processor calling
// through the same throttle (-cpu sets how many).
func BenchmarkThrottleParallel(b *testing.B) {
	for _, c := range throttleCases() {
		b.Run(c.name, func(b *testing.B) {
			call := c.newCall(b)
			warmBreaker(call)
			var misses atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				var m int64
				for pb.Next() {
					if !call() {
						m++
					}
				}
				misses.Add(m)
			})
			reportMisses(b, misses.Load())
		})
	}
}
