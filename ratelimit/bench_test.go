package ratelimit_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resilience4go/resilience4go/ratelimit"
)

// The limiters for benchmarks: one that always admits (a billion permits per second: a
// call takes far longer than 1ns), one that always rejects.
func benchLimiters(b *testing.B) (admit, reject *ratelimit.Limiter) {
	admit, err := ratelimit.New(ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second))
	if err != nil {
		b.Fatal(err)
	}
	reject, err = ratelimit.New(ratelimit.Permits(1), ratelimit.Period(1000*time.Hour))
	if err != nil {
		b.Fatal(err)
	}
	reject.TryAcquire()
	return admit, reject
}

func BenchmarkTryAcquireAdmitted(b *testing.B) {
	l, _ := benchLimiters(b)
	b.ReportAllocs()
	for b.Loop() {
		if !l.TryAcquire() {
			b.Fatal("rejected")
		}
	}
}

func BenchmarkTryAcquireRejected(b *testing.B) {
	_, l := benchLimiters(b)
	b.ReportAllocs()
	for b.Loop() {
		if l.TryAcquire() {
			b.Fatal("admitted")
		}
	}
}

func BenchmarkTryAcquireNAdmitted(b *testing.B) {
	l, _ := benchLimiters(b)
	b.ReportAllocs()
	for b.Loop() {
		if l.TryAcquireN(3) != nil {
			b.Fatal("rejected")
		}
	}
}

func BenchmarkAcquireAdmitted(b *testing.B) {
	l, _ := benchLimiters(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if l.Acquire(ctx) != nil {
			b.Fatal("rejected")
		}
	}
}

func BenchmarkTryAcquireAdmittedParallel(b *testing.B) {
	l, _ := benchLimiters(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.TryAcquire()
		}
	})
}

func BenchmarkTryAcquireRejectedParallel(b *testing.B) {
	_, l := benchLimiters(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.TryAcquire()
		}
	})
}

func BenchmarkAcquireAdmittedParallel(b *testing.B) {
	l, _ := benchLimiters(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_ = l.Acquire(ctx)
		}
	})
}

// The floor of any limiter that reads the clock: one monotonic clock read and one
// compare-and-swap on a shared int64.
var refOrigin = time.Now()

type paddedInt64 struct {
	_ [64]byte
	v atomic.Int64
	_ [56]byte
}

func BenchmarkReferenceSinceCAS(b *testing.B) {
	var state paddedInt64
	b.ReportAllocs()
	for b.Loop() {
		now := int64(time.Since(refOrigin))
		old := state.v.Load()
		state.v.CompareAndSwap(old, max(old, now)+1)
	}
}

func BenchmarkReferenceSinceCASParallel(b *testing.B) {
	var state paddedInt64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			now := int64(time.Since(refOrigin))
			old := state.v.Load()
			state.v.CompareAndSwap(old, max(old, now)+1)
		}
	})
}

// A limiter of a billion permits per second and two more windows that never run out: a
// decision over three pairs, under one lock.
func BenchmarkTryAcquireWindowsAdmitted(b *testing.B) {
	l, err := ratelimit.New(ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second),
		ratelimit.Windows("1000000000/1s, 1000000000/1s"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if !l.TryAcquire() {
			b.Fatal("rejected")
		}
	}
}
