// Package bench measures resilience4go's rate limiter, and the policies composed around it,
// side by side with the Go libraries a user would pick instead, in one binary and one run:
//
//   - golang.org/x/time/rate: Limiter.Allow and Limiter.Wait (a token bucket behind a mutex);
//   - go.uber.org/ratelimit: Take (one int64 moved by compare-and-swap; it blocks, it never
//     rejects);
//   - github.com/failsafe-go/failsafe-go: its rate limiter alone (TryAcquirePermit) and its
//     executor (failsafe.With(...).Get) around a rate limiter, and around a retry, a circuit
//     breaker, a rate limiter and a bulkhead;
//   - the reference: one monotonic clock read (time.Since) and one compare-and-swap on a
//     shared int64, the floor of any limiter that reads the clock.
//
// This is a module of its own, so that the peers never become dependencies of the library.
// Every benchmark comes serial (BenchmarkX) and from every processor at once
// (BenchmarkXParallel, with testing.B.RunParallel). The fairness rules, the same for every
// library:
//
//   - an "admitted" benchmark uses a limit so high that every call is admitted, through the
//     limiter's real code path (for x/time/rate a finite rate of 10⁹ per second with a burst of
//     10⁹, because rate.Inf short-circuits before the token arithmetic);
//   - a "rejected" benchmark uses a limiter of 1 permit per 1000 hours, drained by one call
//     before the timer starts;
//   - failsafe-go's rate limiter is its smooth one (NewSmooth): like GCRA it tracks the time
//     at which the next permit is free, and spaces permits evenly; its bursty one is a fixed
//     window counter. Both take a mutex; the accuracy run measures both.
//
// TestAccuracy is the accuracy run: every limiter set to 100 permits per 100ms (with a burst
// of 100 where the library has one) is hammered by 4 goroutines; it reports the admitted
// count against the GCRA bound that no window may exceed, permits + floor(d/T). Its duration is short by
// default and set with -accuracy.duration; -accuracy.out writes its figures as JSON.
//
// The script run next to this file runs everything and writes RESULTS.md and chart.svg
// through cmd/report.
package bench
