package bench

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/failsafe-go/failsafe-go"
	fscb "github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/sony/gobreaker/v2"

	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/resilience"
)

// The breakers compared, configured alike: count-based over the last breakerWindow (100)
// calls, opening at breakerPercent (50%) failures once the window is full, open for
// breakerWait (60s), breakerTrials (10) trial calls in half-open. Ours has no slow-call
// threshold (its default), so neither side measures the call's duration.
const breakerTrials = 10

// errBreakerBench is the failure the "open" cases trip their breakers with.
var errBreakerBench = errors.New("bench: failed")

// oursBreaker is our breaker with the configuration above.
func oursBreaker(b *testing.B) *circuitbreaker.Breaker {
	b.Helper()
	cb, err := circuitbreaker.New(
		circuitbreaker.FailureRateThreshold(breakerPercent),
		circuitbreaker.SlidingWindowSize(breakerWindow),
		circuitbreaker.MinimumCalls(breakerWindow),
		circuitbreaker.WaitInOpen(breakerWait),
		circuitbreaker.PermittedInHalfOpen(breakerTrials))
	if err != nil {
		b.Fatal(err)
	}
	return cb
}

// oursBreakerSpec is the same breaker as a spec of resilience.Wrap1.
func oursBreakerSpec() resilience.Spec {
	return resilience.CircuitBreaker(
		circuitbreaker.FailureRateThreshold(breakerPercent),
		circuitbreaker.SlidingWindowSize(breakerWindow),
		circuitbreaker.MinimumCalls(breakerWindow),
		circuitbreaker.WaitInOpen(breakerWait),
		circuitbreaker.PermittedInHalfOpen(breakerTrials))
}

// tripping succeeds with n for n >= 0 and fails with errBreakerBench for n < 0: the same decorated
// function serves to trip a breaker (n = -1) and then to measure it.
func tripping(_ context.Context, n int) (int, error) {
	if n < 0 {
		return 0, errBreakerBench
	}
	return n, nil
}

func breakerFailing() (int, error) { return 0, errBreakerBench }

// trip calls call with -1 (a failure) until it is rejected, and fails b if it is not
// after 2×breakerWindow calls.
func trip(b *testing.B, call func(context.Context, int) (int, error)) {
	b.Helper()
	for range 2 * breakerWindow {
		if _, err := call(context.Background(), -1); errors.Is(err, circuitbreaker.ErrOpen) {
			return
		}
	}
	b.Fatal("the breaker did not open")
}

func oursDecorated(b *testing.B, open bool) func(context.Context, int) (int, error) {
	b.Helper()
	call := circuitbreaker.Decorate[decorate.Func[int, int], int, int](oursBreaker(b), tripping)
	if open {
		trip(b, call)
	}
	return call
}

func oursWrappedBreaker(b *testing.B, open bool) func(context.Context, int) (int, error) {
	b.Helper()
	call, err := resilience.Wrap1(newRegistry(b), "Bench.Call", tripping, oursBreakerSpec())
	if err != nil {
		b.Fatal(err)
	}
	if open {
		trip(b, call)
	}
	return call
}

// failsafeBreaker is failsafe-go's breaker with the configuration above: opens at 50
// failures of the last 100 executions, 60s delay, 10 trial executions in half-open (its
// success threshold).
func failsafeBreaker() fscb.CircuitBreaker[int] {
	return fscb.NewBuilder[int]().
		WithFailureThresholdRatio(breakerPercent, breakerWindow).
		WithDelay(breakerWait).
		WithSuccessThreshold(breakerTrials).
		Build()
}

// failsafeOpen is failsafeBreaker tripped by recording failures until it opens.
func failsafeOpen(b *testing.B) fscb.CircuitBreaker[int] {
	b.Helper()
	cb := failsafeBreaker()
	for range 2 * breakerWindow {
		if !cb.TryAcquirePermit() {
			return cb
		}
		cb.RecordFailure()
	}
	b.Fatal("the failsafe-go breaker did not open")
	return nil
}

// failsafeExecOpen is an executor around a failsafe-go breaker tripped through it.
func failsafeExecOpen(b *testing.B) failsafe.Executor[int] {
	b.Helper()
	exec := failsafe.With[int](failsafeBreaker())
	for range 2 * breakerWindow {
		if _, err := exec.Get(breakerFailing); errors.Is(err, fscb.ErrOpen) {
			return exec
		}
	}
	b.Fatal("the failsafe-go breaker did not open")
	return nil
}

// gobreakerBreaker is sony/gobreaker's breaker set as close to the others as it allows:
// ReadyToTrip opens it at a failure ratio of 50% once breakerWindow requests are counted,
// Timeout 60s, MaxRequests 10 in half-open. What differs: gobreaker's counts are not a
// sliding window of the last 100 calls but cumulative since the state began (Interval 0
// never clears them while closed); ReadyToTrip is asked on failures only; in half-open it
// closes after MaxRequests consecutive successes and opens again on the first failure,
// where the others judge the trials' failure rate.
func gobreakerBreaker() *gobreaker.CircuitBreaker[int] {
	return gobreaker.NewCircuitBreaker[int](gobreaker.Settings{
		Name:        "bench",
		MaxRequests: breakerTrials,
		Timeout:     breakerWait,
		ReadyToTrip: func(c gobreaker.Counts) bool {
			return c.Requests >= breakerWindow && c.TotalFailures*100 >= c.Requests*breakerPercent
		},
	})
}

// gobreakerOpen is gobreakerBreaker tripped by failing requests until it opens.
func gobreakerOpen(b *testing.B) *gobreaker.CircuitBreaker[int] {
	b.Helper()
	cb := gobreakerBreaker()
	for range 2 * breakerWindow {
		if _, err := cb.Execute(breakerFailing); errors.Is(err, gobreaker.ErrOpenState) {
			return cb
		}
	}
	b.Fatal("gobreaker did not open")
	return nil
}

// breakerCase is one sub-benchmark: newCall builds the breaker (tripped when open) and
// returns one call through it, which reports whether the call had the expected outcome
// (success when closed, rejection when open).
type breakerCase struct {
	name    string
	newCall func(b *testing.B) func() bool
}

// breakerCases lists what BenchmarkBreaker and BenchmarkBreakerParallel measure. Every
// side calls a function that returns (1, nil) through a closed breaker whose window is full
// of successes (closed/success), or asks an open breaker tripped by 100 failures, 60s
// before it would go half-open (open/rejected):
//   - resilience4go/DecorateFunc: circuitbreaker.Decorate(cb, fn) called with
//     context.Background() (the context check, the permission, fn, the outcome recorded);
//   - resilience4go/Wrap1/breaker: resilience.Wrap1 with the breaker alone (a registry, no
//     observer), the same call;
//   - failsafe/TryAcquirePermit+RecordSuccess: failsafe-go's breaker used directly, as its
//     docs show for standalone use: TryAcquirePermit, then fn, then RecordSuccess (open:
//     TryAcquirePermit alone, refused);
//   - failsafe/Get/breaker: failsafe.With(cb).Get(fn), its executor;
//   - gobreaker/Execute: gobreaker's CircuitBreaker.Execute(fn) (see gobreakerBreaker for
//     how its rules differ).
func breakerCases() []breakerCase {
	ctx := context.Background()
	ours := func(open bool, mk func(*testing.B, bool) func(context.Context, int) (int, error)) func(*testing.B) func() bool {
		return func(b *testing.B) func() bool {
			call := mk(b, open)
			if open {
				return func() bool { _, err := call(ctx, 1); return err != nil }
			}
			return func() bool { _, err := call(ctx, 1); return err == nil }
		}
	}
	return []breakerCase{
		{"resilience4go/DecorateFunc/closed/success", ours(false, oursDecorated)},
		{"resilience4go/Wrap1/breaker/closed/success", ours(false, oursWrappedBreaker)},
		{"resilience4go/DecorateFunc/open/rejected", ours(true, oursDecorated)},
		{"resilience4go/Wrap1/breaker/open/rejected", ours(true, oursWrappedBreaker)},

		{"failsafe/TryAcquirePermit+RecordSuccess/closed/success", func(*testing.B) func() bool {
			cb := failsafeBreaker()
			return func() bool {
				if !cb.TryAcquirePermit() {
					return false
				}
				if _, err := one(); err != nil {
					cb.RecordFailure()
					return false
				}
				cb.RecordSuccess()
				return true
			}
		}},
		{"failsafe/Get/breaker/closed/success", func(*testing.B) func() bool {
			exec := failsafe.With[int](failsafeBreaker())
			return func() bool { _, err := exec.Get(one); return err == nil }
		}},
		{"failsafe/TryAcquirePermit/open/rejected", func(b *testing.B) func() bool {
			cb := failsafeOpen(b)
			return func() bool { return !cb.TryAcquirePermit() }
		}},
		{"failsafe/Get/breaker/open/rejected", func(b *testing.B) func() bool {
			exec := failsafeExecOpen(b)
			return func() bool { _, err := exec.Get(one); return err != nil }
		}},

		{"gobreaker/Execute/closed/success", func(*testing.B) func() bool {
			cb := gobreakerBreaker()
			return func() bool { _, err := cb.Execute(one); return err == nil }
		}},
		{"gobreaker/Execute/open/rejected", func(b *testing.B) func() bool {
			cb := gobreakerOpen(b)
			return func() bool { _, err := cb.Execute(one); return err != nil }
		}},
	}
}

// warmBreaker fills a closed breaker's window: the measured calls then all find a window
// full of successes, in every library.
func warmBreaker(call func() bool) {
	for range 2 * breakerWindow {
		call()
	}
}

// BenchmarkBreaker measures one call through a circuit breaker, by one goroutine (see
// breakerCases for what each side does).
func BenchmarkBreaker(b *testing.B) {
	for _, c := range breakerCases() {
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

// BenchmarkBreakerParallel is BenchmarkBreaker with one goroutine per processor calling
// through the same breaker (-cpu sets how many).
func BenchmarkBreakerParallel(b *testing.B) {
	for _, c := range breakerCases() {
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
