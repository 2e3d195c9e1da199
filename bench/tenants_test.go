package bench

import (
	"context"
	"testing"

	"github.com/sethvargo/go-limiter/memorystore"

	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
)

// BenchmarkTenants takes one permit per call, by one goroutine, for the 100,000 keys of
// live100k (see keyedCase) visited round-robin, every tenth key with a limit of its own
// (twice the default: 2,000,000 per 1000 hours), the others on the default (1,000,000 per
// 1000 hours): every call is admitted and finds its key held.
//
// resilience4go: keyed.New with keyed.PerKey giving the tenants' text, then
// TryAcquire(key, 1). go-limiter: memorystore.New with the default rate, Store.Set(ctx,
// key, tokens, interval) for each tenant with its own limit, then Store.Take(ctx, key).
// Each key is seen once before the timer.
func BenchmarkTenants(b *testing.B) {
	ctx := context.Background()
	keys := keyedClients
	own := make(map[string]bool, len(keys)/10)
	for i := 0; i < len(keys); i += 10 {
		own[keys[i]] = true
	}
	sides := []keyedSide{
		{"resilience4go/TryAcquire", func(b *testing.B, _ keyedCase) (func(string) bool, func()) {
			k, err := keyed.New[string](ratelimit.Permits(keyedLivePermit), ratelimit.Period(keyedLivePeriod),
				keyed.Bounds(keyedKeys, 0), keyed.PerKey(func(key string) string {
					if own[key] {
						return "2000000/1000h"
					}
					return ""
				}))
			if err != nil {
				b.Fatal(err)
			}
			return func(key string) bool { return k.TryAcquire(key, 1) == nil }, func() {}
		}},
		{"go-limiter/Take", func(b *testing.B, _ keyedCase) (func(string) bool, func()) {
			s, err := memorystore.New(&memorystore.Config{Tokens: keyedLivePermit, Interval: keyedLivePeriod})
			if err != nil {
				b.Fatal(err)
			}
			for key := range own {
				if err := s.Set(ctx, key, 2*keyedLivePermit, keyedLivePeriod); err != nil {
					b.Fatal(err)
				}
			}
			return func(key string) bool {
				_, _, _, ok, _ := s.Take(ctx, key)
				return ok
			}, func() { _ = s.Close(ctx) }
		}},
	}
	for _, side := range sides {
		b.Run(side.name+"/tenants100k", func(b *testing.B) {
			take, stop := side.build(b, keyedCase{})
			defer stop()
			for _, key := range keys {
				take(key)
			}
			var misses int64
			n, i := len(keys), 0
			b.ReportAllocs()
			for b.Loop() {
				if !take(keys[i]) {
					misses++
				}
				if i++; i == n {
					i = 0
				}
			}
			reportMisses(b, misses)
		})
	}
}
