// Package adaptivelimit is resilience4go's adaptive concurrency limit (layer
// adaptivelimit.Layer, the innermost of the built-in layers in the default order,
// inside the bulkhead): like a bulkhead it limits the calls in flight at once, but its
// limit moves with the latency it measures, between MinLimit and MaxLimit, starting at
// InitialLimit. A dependency that slows down as more calls reach it gets fewer; one that
// keeps up gets more. The algorithms follow those of Netflix's concurrency-limits
// library: AIMD, Gradient2 and Vegas.
//
// # Admission
//
// A call is let in when fewer calls than the limit are in flight and nobody waits. The
// calls in flight and an admission counter share one atomic word: a call is let in, and
// numbered, with one compare-and-swap, and counted out with another. Its latency is read
// on the limiter's clock when it is let in and when it returns (a synchronous call, also
// when it panics) or its future completes (an asynchronous call); a call rejected at once
// touches nothing else. Neither allocates.
//
// A call that does not fit is rejected at once with the limiter's rejection, matching
// ErrLimitExceeded (MaxWait 0, the default), or waits up to MaxWait in a FIFO queue: while
// anyone waits, newcomers queue behind them (no barging). A synchronous waiter blocks on
// the caller's goroutine; an asynchronous waiter is a queued callback, not a goroutine,
// which starts the call on the goroutine that made room for it, is rejected by a clock
// timer after MaxWait, and leaves the queue at once when its future is canceled or its
// context ends. When the limit rises, waiters are let in at once, on the goroutine whose
// sample raised it. When it falls below the calls in flight, they go on, and nobody new
// is let in until fewer calls than the new limit are in flight.
//
// A call whose context is nil or already done when it arrives is let in by nobody, never
// runs the function and publishes nothing: it is rejected at once with the limiter's
// rejection built with the context's error, so that errors.Is finds both
// ErrLimitExceeded and that error (policy.ErrNilContext for a nil context).
//
// # Samples
//
// Each call that completes gives a sample: its latency, from the moment it was let in
// (the wait does not count) to its return or completion, on the limiter's clock; the
// calls in flight once it was let in, itself included; and whether it was a drop, a sign
// of overload. By its outcome:
//   - nil, or an error not named below (a "not found" is an answer too): a sample;
//   - an error matching IgnoreOn: no sample (IgnoreOn wins over what follows);
//   - an error matching context.DeadlineExceeded or DropOn, or any error once the call's
//     context has passed its deadline (an outer timeout that cancels the call's future
//     makes it fail with async.ErrCanceled, but its context reports the deadline): a
//     drop;
//   - async.ErrCanceled or context.Canceled, the caller giving up: no sample;
//   - a panic, or a nil future: no sample.
//
// With AIMD, a call slower than LatencyThreshold is a drop too. A call that leaves no
// sample still counts out. Permit.Record applies the same rules, without a context.
//
// # Rounds
//
// The algorithm moves the limit once per round, not once per sample: the effect of a
// limit shows only in the latency of the calls let in under it. A round ends with the
// first sample of a call let in after the round began (so that it spans at least one
// call's latency), once it holds at least half as many samples as the most calls that
// were in flight with one of them. It sums up its samples: their average latency, the
// most calls in flight and the drops. Samples of calls let in before the limit last
// changed are left out: they tell of the old limit, as TCP reacts to a loss once per
// window. A round whose calls never used half the limit is app-limited: it says nothing
// of whether the limit could be higher, so the limit holds (but for a drop, with AIMD and
// Vegas).
//
// EventChanged is published when the whole limit changes (the algorithms keep a
// fraction), after the new limit is in force, under the algorithm's lock: events reach
// the listener in the order of the changes.
//
// # Algorithms
//
// lg is max(1, log10(limit)); the baseline is the smallest of the rounds' average
// latencies over the last BaselineWindow to 2·BaselineWindow rounds: the latency of calls
// that do not queue, which the latency-based algorithms compare each round with.
//
//   - AIMD (additive increase, multiplicative decrease, as TCP's congestion avoidance): a
//     round with a drop multiplies the limit by BackoffRatio; one without adds 1. It
//     knows no latency but LatencyThreshold, which must fit the dependency: its default,
//     5s, only catches calls that are failing already.
//   - Gradient2: the gradient is Tolerance·baseline/latency, kept within [0.5, 1]; the
//     limit becomes limit·(1−Smoothing) + (limit·gradient + √limit)·Smoothing: a
//     latency within Tolerance of the baseline grows the limit by its headroom √limit, a
//     longer one shrinks it. Drops count by their latency only.
//   - Vegas (as TCP Vegas): the calls queued at the dependency are estimated as
//     limit·(1 − baseline/latency). A queue of at most lg adds 6·lg (nothing queues: grow
//     fast), one below 3·lg adds lg, one above 6·lg takes lg away, one in between holds
//     the limit; a round with a drop takes lg away.
//
// Where they differ from Netflix's: they move once per round rather than once per sample
// (moved per sample, with their feedback a latency late, they overshoot), and Gradient2's
// long-term latency is the baseline above, not an exponential average of the latencies:
// under an overload that lasts, such an average follows the latency up, and the limit
// with it (with one over 100 rounds in its place, the overload of this package's
// convergence test took the limit from 20 to 84 in 10,000 calls). The baseline forgets a
// latency after at most 2·BaselineWindow rounds, as Netflix's Vegas probes for a new one,
// so that it follows a dependency that became slower for good; the same forgetting may
// let the limit creep up under a queue that never drains for that long.
//
// Vegas is the default, as in Netflix's library. It needs no threshold fitted to the
// dependency (AIMD does), it measures the queue itself rather than a ratio with a
// tolerance, and it grows fastest when the dependency has room: with the load of this
// package's convergence test, once the dependency was fast, the limit passed 50 within
// about 190 calls, against about 1,260 for Gradient2 and 1,500 for AIMD (with
// LatencyThreshold 50ms). Its cost: a sawtooth (there, between 19 and 28 for a knee at
// 20), and a slow descent, lg per round, from a limit far above what the dependency takes
// when no call is dropped. Gradient2 holds steadiest (there, 20 to 21).
//
// # Defaults
//
// Vegas, InitialLimit 20, MinLimit 1, MaxLimit 200, MaxWait 0 (waiting is opt-in, as for
// the bulkhead), BackoffRatio 0.9, LatencyThreshold 5s, Tolerance 1.5, Smoothing 0.2,
// BaselineWindow 50, no DropOn or IgnoreOn, enabled. A disabled limiter lets every call
// through and counts nothing.
//
// Events: EventChanged (attributes "limit" and "previous_limit"), EventRejected for
// every rejection of a call that came with a live context (Wait = how long it waited
// before), and an "AdaptiveLimitWaited" event for a call let in after waiting (Wait = how
// long). Calls let in without waiting publish nothing. Each event reaches the recorder
// with the context of the call it concerns: for EventChanged, the call whose sample
// changed the limit (context.Background() when that sample came through Permit.Record).
//
// # Outcomes
//
// With a recorder (a registry's observer, resilience.WithObserver), each admission
// decision is recorded once, with the call's context: observe.ResultAdmitted with Wait =
// how long the call waited to be let in (0 when it did not wait), or
// observe.ResultRejected with Err = the rejection, also for a call refused on arrival for
// its nil or done context (recorded with context.Background() for a nil one). Acquire
// records as the decorated calls do. An asynchronous call whose future is canceled while
// it waits was neither let in nor refused: nothing is recorded for it. A disabled limiter
// records nothing. Without a recorder, recording costs a nil check.
package adaptivelimit
