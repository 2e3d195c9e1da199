package bench

import (
	"context"
	"runtime"
	"testing"

	"github.com/failsafe-go/failsafe-go"
	fsbh "github.com/failsafe-go/failsafe-go/bulkhead"
	"golang.org/x/sync/semaphore"

	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/resilience"
)

// The bulkhead benchmarks: a slot of a bulkhead of 25, taken and given back ("admitted"),
// or refused because the bulkhead is full ("rejected": a bulkhead of 1 whose slot is held
// before the timer starts).
//
//   - resilience4go: a call guarded by bulkhead.NewPolicy, and a call wrapped with
//     resilience.Wrap1 and a bulkhead (both refuse at once when full, as the others do);
//   - golang.org/x/sync/semaphore: Weighted.TryAcquire(1) then Release(1);
//   - failsafe-go: Bulkhead.TryAcquirePermit then ReleasePermit, and its executor's Get.

func oursBulkhead(b *testing.B, slots int) *bulkhead.Bulkhead {
	b.Helper()
	bh, err := bulkhead.New(bulkhead.MaxConcurrent(slots))
	if err != nil {
		b.Fatal(err)
	}
	return bh
}

// BenchmarkBulkhead: one goroutine at a time.
func BenchmarkBulkhead(b *testing.B) { benchmarkBulkhead(b, false) }

// BenchmarkBulkheadParallel: GOMAXPROCS goroutines sharing the bulkhead.
func BenchmarkBulkheadParallel(b *testing.B) { benchmarkBulkhead(b, true) }

func benchmarkBulkhead(b *testing.B, parallel bool) {
	ctx := context.Background()
	loop := func(b *testing.B, call func() bool, want bool) {
		b.ReportAllocs()
		if !parallel {
			for b.Loop() {
				if call() != want {
					b.Fatal("unexpected outcome")
				}
			}
			return
		}
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if call() != want {
					b.Error("unexpected outcome")
					return
				}
			}
		})
	}
	for _, admitted := range []bool{true, false} {
		slots, name := bulkheadSlots, "admitted"
		if !admitted {
			slots, name = 1, "rejected"
		}
		// A call with the argument 0 holds its slot until gate is closed: the rejected
		// cases start one before the timer, so that the bulkhead of 1 is full.
		held := func(gate chan struct{}) func(ctx context.Context, n int) (int, error) {
			return func(ctx context.Context, n int) (int, error) {
				if n == 0 {
					<-gate
				}
				return n, nil
			}
		}
		b.Run("resilience4go/NewPolicy/"+name, func(b *testing.B) {
			bh := oursBulkhead(b, slots)
			gate := make(chan struct{})
			p, fn := bulkhead.NewPolicy[int](bh), held(gate)
			hold := p.Decorate(func(ctx context.Context) (int, error) { return fn(ctx, 0) })
			call := p.Decorate(func(ctx context.Context) (int, error) { return fn(ctx, 1) })
			done := make(chan struct{})
			defer func() { close(gate); <-done }()
			if admitted {
				close(done)
			} else {
				go func() { defer close(done); _, _ = hold(ctx) }()
				for bh.Snapshot().AvailableSlots != 0 {
					runtime.Gosched()
				}
			}
			loop(b, func() bool { _, err := call(ctx); return err == nil }, admitted)
		})
		b.Run("resilience4go/Wrap1/"+name, func(b *testing.B) {
			gate := make(chan struct{})
			reg := newRegistry(b)
			call, err := resilience.Wrap1(reg, "Bench.Bulkhead", held(gate), resilience.Bulkhead(bulkhead.MaxConcurrent(slots)))
			if err != nil {
				b.Fatal(err)
			}
			done := make(chan struct{})
			defer func() { close(gate); <-done }()
			if admitted {
				close(done)
			} else {
				go func() { defer close(done); _, _ = call(ctx, 0) }()
				h, err := resilience.Lookup[*bulkhead.Bulkhead](reg, bulkhead.Layer, "Bench.Bulkhead")
				if err != nil {
					b.Fatal(err)
				}
				for h.Snapshot().AvailableSlots != 0 {
					runtime.Gosched()
				}
			}
			loop(b, func() bool { _, err := call(ctx, 1); return err == nil }, admitted)
		})
		b.Run("semaphore/TryAcquire/"+name, func(b *testing.B) {
			sem := semaphore.NewWeighted(int64(slots))
			if !admitted {
				sem.TryAcquire(1)
			}
			loop(b, func() bool {
				if sem.TryAcquire(1) {
					sem.Release(1)
					return true
				}
				return false
			}, admitted)
		})
		b.Run("failsafe/TryAcquirePermit/"+name, func(b *testing.B) {
			bh := fsbh.New[int](uint(slots))
			if !admitted {
				bh.TryAcquirePermit()
			}
			loop(b, func() bool {
				if bh.TryAcquirePermit() {
					bh.ReleasePermit()
					return true
				}
				return false
			}, admitted)
		})
		b.Run("failsafe/Get/"+name, func(b *testing.B) {
			bh := fsbh.New[int](uint(slots))
			if !admitted {
				bh.TryAcquirePermit()
			}
			ex := failsafe.With[int](bh)
			loop(b, func() bool { _, err := ex.Get(one); return err == nil }, admitted)
		})
	}
}
