package bench

import (
	"sync/atomic"
	"testing"
	"time"
)

// The reference is the floor of any limiter that reads the clock: one monotonic clock read
// (time.Since of a time that carries a monotonic reading, as clock.System does) and one
// compare-and-swap on a shared int64 alone on its cache line, as GCRA's TAT is.
var refOrigin = time.Now()

type paddedInt64 struct {
	_ [64]byte
	v atomic.Int64
	_ [56]byte
}

var sink time.Duration

// casUntilWon moves state forward as an admitted GCRA call must, without the arithmetic:
// it loads the value and compare-and-swaps it to max(old, now)+1, and loads again after a
// lost race until its compare-and-swap wins.
func casUntilWon(state *atomic.Int64, now int64) {
	for {
		old := state.Load()
		if state.CompareAndSwap(old, max(old, now)+1) {
			return
		}
	}
}

// BenchmarkReference measures one clock read plus one compare-and-swap, by one goroutine;
// the same with the compare-and-swap retried until it wins (by one goroutine it always wins
// at once); and the clock read alone, the part of it that no limiter can avoid.
func BenchmarkReference(b *testing.B) {
	b.Run("SinceCAS", func(b *testing.B) {
		var state paddedInt64
		b.ReportAllocs()
		for b.Loop() {
			// Move the state forward as an admitted GCRA call would, without the arithmetic.
			now := int64(time.Since(refOrigin))
			old := state.v.Load()
			state.v.CompareAndSwap(old, max(old, now)+1)
		}
	})
	b.Run("SinceCASWon", func(b *testing.B) {
		var state paddedInt64
		b.ReportAllocs()
		for b.Loop() {
			casUntilWon(&state.v, int64(time.Since(refOrigin)))
		}
	})
	b.Run("Since", func(b *testing.B) {
		var d time.Duration
		b.ReportAllocs()
		for b.Loop() {
			d += time.Since(refOrigin)
		}
		sink = d
	})
}

// BenchmarkReferenceParallel is BenchmarkReference from every processor at once, on one
// shared int64. SinceCAS drops a compare-and-swap that loses the race; SinceCASWon retries
// it, as an admitted call must, so it measures the floor under contention of a limiter
// that takes no lock and parks no caller: what moving the shared word's cache line between
// the cores costs on the machine at hand. A limiter behind a mutex, or one that sleeps now
// and then, can cost less per call in such a loop: one core runs calls alone while the
// other waits.
func BenchmarkReferenceParallel(b *testing.B) {
	b.Run("SinceCAS", func(b *testing.B) {
		var state paddedInt64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				now := int64(time.Since(refOrigin))
				old := state.v.Load()
				state.v.CompareAndSwap(old, max(old, now)+1)
			}
		})
	})
	b.Run("SinceCASWon", func(b *testing.B) {
		var state paddedInt64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				casUntilWon(&state.v, int64(time.Since(refOrigin)))
			}
		})
	})
	b.Run("Since", func(b *testing.B) {
		var total atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var d time.Duration
			for pb.Next() {
				d += time.Since(refOrigin)
			}
			total.Add(int64(d))
		})
		sink = time.Duration(total.Load())
	})
}
