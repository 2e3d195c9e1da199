package bench

import (
	"context"
	"errors"
	"testing"

	"github.com/failsafe-go/failsafe-go"
	fsal "github.com/failsafe-go/failsafe-go/adaptivelimiter"

	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// errFull is a call's error when an adaptive limit refuses it (a miss: the limits are far
// above the one or two calls in flight, so none should be refused).
var errFull = errors.New("adaptive limit full")

// BenchmarkAdaptiveLimit measures one admitted call through an adaptive concurrency
// limit, each library with its defaults: ours (Vegas) wrapped with resilience.Wrap1 and
// taken by hand (Acquire, then Record), against failsafe-go's adaptivelimiter through its
// executor and taken by hand (TryAcquirePermit, then Record). Both measure the call's
// latency on every call.
func BenchmarkAdaptiveLimit(b *testing.B) { benchmarkAdaptiveLimit(b, false) }

// BenchmarkAdaptiveLimitParallel is BenchmarkAdaptiveLimit with one goroutine per processor.
func BenchmarkAdaptiveLimitParallel(b *testing.B) { benchmarkAdaptiveLimit(b, true) }

func benchmarkAdaptiveLimit(b *testing.B, parallel bool) {
	b.Run("resilience4go/Wrap1/adaptivelimit", func(b *testing.B) {
		call, err := resilience.Wrap1(newRegistry(b), "Bench.Call", echo, resilience.AdaptiveLimit())
		if err != nil {
			b.Fatal(err)
		}
		measureCalls(b, parallel, func(ctx context.Context) error { _, err := call(ctx, 1); return err })
	})
	b.Run("resilience4go/Acquire/adaptivelimit", func(b *testing.B) {
		l, err := adaptivelimit.New() // MaxWait 0: Acquire never waits
		if err != nil {
			b.Fatal(err)
		}
		measureCalls(b, parallel, func(ctx context.Context) error {
			p, err := l.Acquire(ctx)
			if err != nil {
				return errFull
			}
			p.Record(nil)
			return nil
		})
	})
	b.Run("failsafe/Get/adaptivelimiter", func(b *testing.B) {
		exec := failsafe.With[int](fsal.NewWithDefaults[int]())
		measureCalls(b, parallel, func(context.Context) error { _, err := exec.Get(one); return err })
	})
	b.Run("failsafe/TryAcquirePermit/adaptivelimiter", func(b *testing.B) {
		l := fsal.NewWithDefaults[int]()
		measureCalls(b, parallel, func(context.Context) error {
			p, ok := l.TryAcquirePermit()
			if !ok {
				return errFull
			}
			p.Record()
			return nil
		})
	})
}
