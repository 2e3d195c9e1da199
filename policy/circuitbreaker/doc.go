// Package circuitbreaker is resilience4go's circuit breaker: it stops calling a function
// that keeps failing (or keeps being slow), gives it time to recover, and then tries it
// again with a few trial calls. Its semantics are those of Resilience4j's CircuitBreaker.
// Its states print the way Go names things ("closed", "half-open"), while its
// configuration keys keep Resilience4j's names and values (circuitBreaker.slidingWindowType
// is COUNT_BASED or TIME_BASED).
//
// # States
//
//   - closed (Closed): calls pass. Each outcome (success or failure, slow or not) goes into
//     a sliding window. Once the window holds at least MinimumCalls outcomes, a failure
//     rate at or above FailureRateThreshold, or a slow-call rate at or above
//     SlowCallRateThreshold, opens the breaker.
//   - open (Open): calls are rejected at once with the breaker's rejection, which matches
//     ErrOpen and is never retried; the function is not called. Once WaitInOpen has
//     passed, the next call moves the breaker to half-open. That is computed on the call,
//     from the clock: there is no background goroutine and no timer.
//   - half-open (HalfOpen): PermittedInHalfOpen trial calls pass; calls beyond them are
//     rejected while the trials run. Once every trial has completed, their failure and
//     slow-call rates decide: at or above a threshold, the breaker opens again for another
//     WaitInOpen; below both, it closes with an empty window. The trials have
//     MaxWaitInHalfOpen (default 60s) from the moment the breaker went half-open: if they
//     have not all completed by then (a call stuck, a future that never completes), the
//     breaker gives up on them and is open again from that instant, for another
//     WaitInOpen. Like the move to half-open, this is found out on the next call (or the
//     next trial to complete), from the clock; the transition event carries the instant
//     the bound passed, and a call that comes after that open wait too is the first trial
//     of a new half-open. No configuration leaves the breaker half-open for good.
//   - disabled (Disabled, set by TransitionTo or Enabled(false)): every call passes and nothing
//     is recorded.
//   - forced-open (ForcedOpen, set by TransitionTo): every call is rejected.
//
// Reset returns the breaker to closed with an empty window (to disabled if its
// configuration disables it: Enabled(false), or a reload that sets circuitBreaker.enabled
// to false).
//
// # Outcomes
//
// A call that returns a nil error is a success. An error matching IgnoreOn (errors.Is)
// counts as nothing (in half-open it gives its trial slot back). Otherwise, without
// RecordOn every error is a failure; with RecordOn only the matching errors are failures
// and other errors count as successes. RecordIf adds the outcomes its predicate returns
// true for, a result with a nil error included (IgnoreOn still wins). A call that panics is recorded as a
// failure and the panic goes on. When SlowCallThreshold is set, a call that takes longer
// than it on the breaker's clock is also slow, whether it succeeded or failed (strictly
// longer, as in Resilience4j). It is not set by default (0): no call is slow, and
// SlowCallRateThreshold never opens the breaker.
//
// Errors from the caller's context (context.Canceled, context.DeadlineExceeded) are
// errors like any other, as in Resilience4j: they count as failures unless listed in
// IgnoreOn (add them there if callers giving up should not open the breaker).
//
// An outcome is recorded in the state that admitted the call: a call admitted while
// closed that completes after the breaker has opened (or been reset, forced open, ...) is
// not recorded, and neither is a trial that completes after the breaker gave up on it
// (MaxWaitInHalfOpen): its late success does not close the breaker, its late failure
// does not reopen it, and it neither takes nor frees a trial slot of a later half-open.
// The caller still gets the call's own result.
//
// A call whose context is nil or already done when it arrives is not a call for the
// breaker, in any state: the function is not called, no trial slot is taken, nothing is
// recorded, no state changes and no event is published; the call returns the context's
// error as is (policy.ErrNilContext for a nil context), or an asynchronous call a future
// failed with it. An asynchronous function that returns a nil future is a call that failed
// with async.ErrNilFuture: recorded like any error, and the caller gets a future failed
// with it.
//
// # Windows
//
// A count-based window (the default) holds the outcomes of the last SlidingWindowSize
// calls. A time-based window (SlidingWindowType(TimeBased)) holds the calls that
// completed in the last SlidingWindowSize seconds, aggregated in 1-second buckets of the
// clock; buckets drop out as the clock moves on. For count-based windows MinimumCalls is
// capped at the window size.
//
// # Events
//
// A transition publishes EventTransition and a rejection EventRejected, whose Err is the
// rejection (matching ErrOpen) and whose RetryAfter is the time left before an open
// breaker lets a trial through (0 when forced open, or half-open with every trial taken);
// see OnEvent. Admitted calls publish nothing.
//
// The recorder of a registry's observer (resilience.WithObserver) is told each call's
// outcome, with the call's context: observe.ResultRejected when the breaker refuses it;
// once an admitted call ends, observe.ResultSucceeded, ResultFailed or ResultIgnored as
// the breaker classifies it, with its Latency on the breaker's clock and Slow. Events a
// call causes (its rejection, the transitions it makes) reach the recorder with that
// call's context; those of TransitionTo, Reset and reloads with context.Background(). A
// call admitted while the breaker is disabled, or refused because its context was nil or
// done, is not recorded.
//
// Durations saturate: a WaitInOpen, MaxWaitInHalfOpen or SlowCallThreshold of about 292
// years (the largest time.Duration) puts its deadline at the end of the clock's range,
// and no deadline, wait or measured duration wraps around into a negative one.
//
// # Live reconfiguration
//
// A registry's Reload replaces the configuration of a running breaker whose configuration
// keys changed, atomically: a call reads
// the configuration in force once, when it is admitted, and classifies its outcome by it
// (its error lists and SlowCallThreshold), so a call in flight keeps the configuration it
// started with; the rates are compared with the thresholds in force when an outcome is
// recorded. Every setting changes live but the sliding window's type:
//   - the thresholds (failure rate, slow-call rate), MinimumCalls and the error lists,
//     from the next call or outcome; the window keeps its outcomes;
//   - WaitInOpen and MaxWaitInHalfOpen, from the next transition: a breaker already open
//     or half-open keeps the deadline it was given;
//   - PermittedInHalfOpen, from the next call (lowered while half-open, the trials in
//     flight are waited for, and the trials recorded then decide);
//   - SlidingWindowSize, at once, keeping the most recent outcomes that fit;
//   - enabled, at once: the breaker goes to its new initial state, as Reset does.
//
// SlidingWindowType cannot change on a running breaker (its window's outcomes cannot be
// converted from calls to seconds or back): the reload is refused with R4C-REG-012 and
// changes nothing. An invalid configuration is refused with the error New would return
// and changes nothing. A change publishes a ConfigChanged event naming the attributes
// that changed, by their configuration names; a configuration equal to the one in force
// publishes nothing. A reload checks the new configurations of every instance it changes
// before it applies any.
//
// # Composition
//
// In the default order the breaker sits inside the retry and outside the rate limiter:
// a call it rejects never reaches the rate limiter or the layers inside it, so it spends
// no permit, and an outer retry never retries its rejection. Rejections of inner layers
// are errors like any other: add ratelimit.ErrExceeded to IgnoreOn so that your own
// limiter does not open your breaker.
//
// # Defaults
//
// Failure rate 50%, a count-based window of 100 calls, 100 minimum calls, 60s open, 10
// trial calls given at most 60s in half-open, no slow-call detection (SlowCallThreshold 0;
// Resilience4j's slowCallDurationThreshold defaults to 60s: set it for its behaviour),
// slow-call rate 100% (used only with a threshold), no error lists, enabled.
//
// # Cost
//
// An admitted call loads the state and the configuration in force (two atomic loads, no
// lock) and reads the clock only for what needs the time:
//   - with a SlowCallThreshold, or a recorder that wants latencies (recording.Timed), its
//     start and its end, to measure it;
//   - otherwise none at its start, and at its end only for a time-based window (the
//     bucket), a half-open trial (its deadline), or a transition to open (with the
//     system clock it is then read under the mutex; another clock is read before the
//     mutex, for every outcome that goes on to it).
//
// Its outcome is recorded under the breaker's mutex, in a small ring or bucket, with one
// exception: a call that succeeded without being slow, while a count-based window is full
// of such calls, changes nothing (it would replace one success by another, and the rates
// stay 0), so it only reads one atomic flag and writes nothing shared: without a
// threshold, recorder or result predicate, such a call takes no lock, reads no clock and
// makes no atomic write. A rejected call reads the clock at most once and takes no lock
// while the breaker stays open. Neither allocates, with or without a recorder. A call
// whose error is ignored in the closed state reads its end only for a recorder, and then
// only when the call is measured (a threshold, or a recorder that wants latencies).
package circuitbreaker
