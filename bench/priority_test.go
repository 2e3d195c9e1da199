package bench

import (
	"context"
	"testing"

	fsal "github.com/failsafe-go/failsafe-go/adaptivelimiter"
	fspriority "github.com/failsafe-go/failsafe-go/priority"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
)

// BenchmarkPriority measures the admitted path of a call that carries a priority in its
// context, through a limit that sheds by priority, each library with its defaults and far
// from full (one call in flight at a time, or one per processor):
//
//   - ours: the adaptive limit's Acquire then Record, and a call through a bulkhead's
//     NewPolicy Decorate, for a critical call (its share is the whole limit) and a
//     sheddable one (its share is computed from the limit and the reserve);
//   - failsafe-go: its prioritized adaptive limiter (adaptivelimiter.BuildPrioritized with
//     adaptivelimiter.NewPrioritizer), AcquirePermit with the priority in the context (it
//     reads it, checks the level against its rejection threshold and takes a permit),
//     then Record, for a high and a very low priority.
//
// Each context is built once, outside the timed loop, as a server does per request.
func BenchmarkPriority(b *testing.B) { benchmarkPriority(b, false) }

// BenchmarkPriorityParallel is BenchmarkPriority with one goroutine per processor.
func BenchmarkPriorityParallel(b *testing.B) { benchmarkPriority(b, true) }

func benchmarkPriority(b *testing.B, parallel bool) {
	ours := []struct {
		name string
		p    policy.Priority
	}{{"critical", policy.PriorityCritical}, {"sheddable", policy.PrioritySheddable}}
	for _, lv := range ours {
		ctx := policy.WithPriority(context.Background(), lv.p)
		b.Run("resilience4go/Acquire/adaptivelimit/"+lv.name, func(b *testing.B) {
			l, err := adaptivelimit.New()
			if err != nil {
				b.Fatal(err)
			}
			measureCalls(b, parallel, func(context.Context) error {
				p, err := l.Acquire(ctx)
				if err != nil {
					return errFull
				}
				p.Record(nil)
				return nil
			})
		})
		b.Run("resilience4go/NewPolicy/bulkhead/"+lv.name, func(b *testing.B) {
			call := bulkhead.NewPolicy[int](oursBulkhead(b, bulkheadSlots)).
				Decorate(func(context.Context) (int, error) { return 1, nil })
			measureCalls(b, parallel, func(context.Context) error { _, err := call(ctx); return err })
		})
	}
	theirs := []struct {
		name string
		p    fspriority.Priority
	}{{"high", fspriority.High}, {"verylow", fspriority.VeryLow}}
	for _, lv := range theirs {
		ctx := fspriority.ContextWithPriority(context.Background(), lv.p)
		b.Run("failsafe/AcquirePermit/prioritylimiter/"+lv.name, func(b *testing.B) {
			l := fsal.NewBuilder[int]().BuildPrioritized(fsal.NewPrioritizer())
			measureCalls(b, parallel, func(context.Context) error {
				p, err := l.AcquirePermit(ctx)
				if err != nil {
					return errFull
				}
				p.Record()
				return nil
			})
		})
	}
}
