package keyed_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
)

// benchKeyed returns a keyed limiter that always admits and one that always refuses, on
// the system clock, each holding the keys of benchKeys.
func benchKeyed(b *testing.B) (admit, reject *keyed.Limiter[string]) {
	admit, err := keyed.New[string](ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second))
	if err != nil {
		b.Fatal(err)
	}
	reject, err = keyed.New[string](ratelimit.Permits(1), ratelimit.Period(1000*time.Hour))
	if err != nil {
		b.Fatal(err)
	}
	for _, key := range benchKeys {
		_ = admit.TryAcquire(key, 1)
		_ = reject.TryAcquire(key, 1)
	}
	return admit, reject
}

var benchKeys = func() []string {
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = ipv4(i * 7919)
	}
	return keys
}()

// A key that already has a cell: the lookup and the GCRA decision (0 allocs).
func BenchmarkKeyedTryAcquireExistingKey(b *testing.B) {
	k, _ := benchKeyed(b)
	key := benchKeys[42]
	b.ReportAllocs()
	for b.Loop() {
		if k.TryAcquire(key, 1) != nil {
			b.Fatal("rejected")
		}
	}
}

func BenchmarkKeyedTryAcquireExistingKeyRejected(b *testing.B) {
	_, k := benchKeyed(b)
	key := benchKeys[42]
	b.ReportAllocs()
	for b.Loop() {
		if k.TryAcquire(key, 1) == nil {
			b.Fatal("admitted")
		}
	}
}

func BenchmarkKeyedDecideExistingKey(b *testing.B) {
	k, _ := benchKeyed(b)
	key := benchKeys[42]
	b.ReportAllocs()
	for b.Loop() {
		if !k.Decide(context.Background(), key).Admitted {
			b.Fatal("rejected")
		}
	}
}

// Many goroutines, 1,024 existing keys spread over the shards.
func BenchmarkKeyedTryAcquireExistingKeysParallel(b *testing.B) {
	k, _ := benchKeyed(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			_ = k.TryAcquire(benchKeys[i&1023], 1)
			i++
		}
	})
}

// Every call a key never seen (a spoofing attack), with the limiter full of busy keys:
// each new key takes the place of the cell nearest idle among those sampled.
func BenchmarkKeyedNewKeyAtBound(b *testing.B) {
	k, err := keyed.New[string](ratelimit.Permits(1), ratelimit.Period(time.Hour), keyed.Bounds(16_384, 0))
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; k.Len() < 16_384-64 && i < 1_000_000; i++ {
		_ = k.TryAcquire(ipv4(i), 1)
	}
	keys := make([]string, 1<<16)
	for i := range keys {
		keys[i] = ipv4(1_000_000 + i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = k.TryAcquire(keys[i&(1<<16-1)], 1)
		i++
	}
}

// Every call a key never seen: each is made a cell, in a free place or, at the bound, in
// the place of an idle one.
func BenchmarkKeyedNewKeyAdmitted(b *testing.B) {
	k, err := keyed.New[string](ratelimit.Permits(10), ratelimit.Period(time.Microsecond*10), keyed.Bounds(1<<20, 0))
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]string, 1<<16)
	for i := range keys {
		keys[i] = ipv4(i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = k.TryAcquire(keys[i&(1<<16-1)]+"x", 1) // a fresh string each time, as from a request
		i++
	}
}

// A key of 1 KB, longer than MaxKeyBytes: each call hashes it.
func BenchmarkKeyedTryAcquireLongKey(b *testing.B) {
	k, _ := benchKeyed(b)
	key := strings.Repeat(benchKeys[42], 1024/len(benchKeys[42])+1)
	b.ReportAllocs()
	for b.Loop() {
		if k.TryAcquire(key, 1) != nil {
			b.Fatal("rejected")
		}
	}
}

// The memory of a full keyed limiter: MaxKeys = 100,000 IPv4 keys, reported as bytes
// per key held (runtime.MemStats, after a collection).
func BenchmarkKeyedMemoryPerKey(b *testing.B) {
	const maxKeys = 100_000
	keys := make([]string, 400_000)
	for i := range keys {
		keys[i] = ipv4(i)
	}
	var perKey float64
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		k, err := keyed.New[string](ratelimit.Permits(10), ratelimit.Period(time.Hour), keyed.Bounds(maxKeys, 0))
		if err != nil {
			b.Fatal(err)
		}
		for _, key := range keys {
			_ = k.TryAcquire(key, 1)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perKey = float64(after.HeapAlloc-before.HeapAlloc) / float64(k.Len())
		runtime.KeepAlive(k)
	}
	b.ReportMetric(perKey, "B/key")
}
