package bench

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	golimiter "github.com/sethvargo/go-limiter"
	"github.com/sethvargo/go-limiter/memorystore"
	ulule "github.com/ulule/limiter/v3"
	ululemem "github.com/ulule/limiter/v3/drivers/store/memory"

	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
)

// The keyed benchmarks take one permit for a key per call, the key taken from a slice of
// preformatted strings ("client-%d") built before the timer, with the same rate on every
// side:
//   - hotkey: one key, every call; a billion permits per second with a burst as large
//     (every call is admitted).
//   - live100k: 100,000 keys visited round-robin, each seen once before the timer; a
//     million permits per 1000 hours (one every 3.6s) with a burst of a million: every key
//     is admitted at each visit and none has its quota back (none is idle) by its next
//     visit, so every call finds the key's state held.
//   - idle100k: the same 100,000 keys at a billion permits per second: each key has its
//     whole quota back (it is idle) by its next visit, and every call is admitted. A
//     limiter that drops idle keys remakes them here; one that keeps them finds them.
//
// resilience4go: Keyed[string].TryAcquire, MaxKeys at its default of 100,000 (every key
// held). go-limiter: memorystore.New with Tokens and Interval, then Store.Take(ctx, key)
// (a token bucket per key in one map under one RWMutex; its sweeper, every 6 hours by
// default, never runs during a benchmark). ulule: limiter.New(memory store, Rate{Period,
// Limit}).Get(ctx, key), a fixed window per key (a sync.Map of counters, with the key
// prefixed), built without its cleanup goroutine, which would outlive the benchmark.
const (
	keyedKeys       = 100_000
	keyedLivePermit = 1_000_000
	keyedLivePeriod = 1000 * time.Hour
	keyedIdlePermit = 1_000_000_000
	keyedIdlePeriod = time.Second
)

// keyedCase is one benchmark case: its name, its keys and its rate.
type keyedCase struct {
	name    string
	keys    []string
	permits int
	period  time.Duration
}

var keyedClients = func() []string {
	keys := make([]string, keyedKeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("client-%d", i)
	}
	return keys
}()

func keyedCases() []keyedCase {
	return []keyedCase{
		{"hotkey", keyedClients[:1], keyedIdlePermit, keyedIdlePeriod},
		{"live100k", keyedClients, keyedLivePermit, keyedLivePeriod},
		{"idle100k", keyedClients, keyedIdlePermit, keyedIdlePeriod},
	}
}

// keyedSide is one library under the benchmark: build returns the call that takes a
// permit for a key (true: admitted) and the function that releases the limiter.
type keyedSide struct {
	name  string
	build func(b *testing.B, c keyedCase) (take func(string) bool, stop func())
}

func keyedSides() []keyedSide {
	ctx := context.Background()
	return []keyedSide{
		{"resilience4go/TryAcquire", func(b *testing.B, c keyedCase) (func(string) bool, func()) {
			k, err := keyed.New[string](ratelimit.Permits(c.permits), ratelimit.Period(c.period),
				keyed.Bounds(keyedKeys, 0))
			if err != nil {
				b.Fatal(err)
			}
			return func(key string) bool { return k.TryAcquire(key, 1) == nil }, func() {}
		}},
		{"go-limiter/Take", func(b *testing.B, c keyedCase) (func(string) bool, func()) {
			s, err := memorystore.New(&memorystore.Config{Tokens: uint64(c.permits), Interval: c.period})
			if err != nil {
				b.Fatal(err)
			}
			return func(key string) bool {
				_, _, _, ok, _ := s.Take(ctx, key)
				return ok
			}, func() { _ = s.Close(ctx) }
		}},
		{"ulule/Get", func(b *testing.B, c keyedCase) (func(string) bool, func()) {
			l := ulule.New(ululemem.NewStoreWithOptions(ulule.StoreOptions{Prefix: ulule.DefaultPrefix}),
				ulule.Rate{Period: c.period, Limit: int64(c.permits)})
			return func(key string) bool {
				lc, err := l.Get(ctx, key)
				return err == nil && !lc.Reached
			}, func() {}
		}},
	}
}

var _ golimiter.Store // the interface memorystore.New returns

// BenchmarkKeyed takes one permit per call, by one goroutine, for the keys of each case
// in turn (see keyedCase for the rates and the work on each side).
func BenchmarkKeyed(b *testing.B) {
	for _, side := range keyedSides() {
		for _, c := range keyedCases() {
			b.Run(side.name+"/"+c.name, func(b *testing.B) {
				take, stop := side.build(b, c)
				defer stop()
				for _, key := range c.keys {
					take(key)
				}
				var misses int64
				n := len(c.keys)
				i := 0
				b.ReportAllocs()
				for b.Loop() {
					if !take(c.keys[i]) {
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
}

// BenchmarkKeyedParallel is BenchmarkKeyed with b.RunParallel: each goroutine walks the
// keys round-robin from its own starting point.
func BenchmarkKeyedParallel(b *testing.B) {
	for _, side := range keyedSides() {
		for _, c := range keyedCases() {
			b.Run(side.name+"/"+c.name, func(b *testing.B) {
				take, stop := side.build(b, c)
				defer stop()
				for _, key := range c.keys {
					take(key)
				}
				var misses, start atomic.Int64
				n := len(c.keys)
				b.ReportAllocs()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					i := int(start.Add(7919)) % n
					var miss int64
					for pb.Next() {
						if !take(c.keys[i]) {
							miss++
						}
						if i++; i == n {
							i = 0
						}
					}
					misses.Add(miss)
				})
				reportMisses(b, misses.Load())
			})
		}
	}
}

// BenchmarkKeyedMemory reports the heap held per key (B/key: runtime.MemStats HeapAlloc
// after a collection, minus before the limiter was built, divided by the keys held, which
// it reports as keys) with
// 10,000, 100,000 and 1,000,000 live keys (each took one permit of a million per 1000 hours).
// resilience4go's MaxKeys is the number of keys; go-limiter's memorystore is built with
// its defaults but for the rate.
func BenchmarkKeyedMemory(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("client-%d", i)
		}
		name := fmt.Sprintf("%dk", n/1000)
		b.Run("resilience4go/TryAcquire/"+name, func(b *testing.B) {
			var perKey float64
			var held int
			for b.Loop() {
				before := keyedHeap()
				k, err := keyed.New[string](ratelimit.Permits(keyedLivePermit), ratelimit.Period(keyedLivePeriod),
					keyed.Bounds(n, 0))
				if err != nil {
					b.Fatal(err)
				}
				for _, key := range keys {
					_ = k.TryAcquire(key, 1)
				}
				held = k.Len()
				perKey = float64(keyedHeap()-before) / float64(held)
				runtime.KeepAlive(k)
			}
			b.ReportMetric(perKey, "B/key")
			b.ReportMetric(float64(held), "keys")
		})
		b.Run("go-limiter/Take/"+name, func(b *testing.B) {
			var perKey float64
			for b.Loop() {
				before := keyedHeap()
				s, err := memorystore.New(&memorystore.Config{Tokens: keyedLivePermit, Interval: keyedLivePeriod})
				if err != nil {
					b.Fatal(err)
				}
				for _, key := range keys {
					_, _, _, _, _ = s.Take(ctx, key)
				}
				perKey = float64(keyedHeap()-before) / float64(n)
				runtime.KeepAlive(s)
				_ = s.Close(ctx)
			}
			b.ReportMetric(perKey, "B/key")
		})
	}
}

// keyedHeap returns the bytes of the heap in use after a collection.
func keyedHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
