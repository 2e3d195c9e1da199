// Package ratelimit is resilience4go's rate limiter: at most Permits calls per Period
// pass, and the rest are rejected at once or wait up to MaxWait for their turn.
//
// The algorithm is GCRA, the "meter" form of a token bucket: permits are spaced one
// emission interval T = Period/Permits apart (rounded up to a whole nanosecond), and
// unused ones accumulate up to a burst of Permits. So any window of length d sees at most
// Permits + floor(d/T) calls. The state is one int64 moved by compare-and-swap: no mutex,
// no goroutine, one clock read per call, and no allocation, admitted or rejected.
//
// Three ways to take a permit from a Limiter built with New:
//   - TryAcquire takes a permit that is free now, or reports false. Most callers that
//     must not wait want this.
//   - Reserve takes a permit within MaxWait without waiting and returns a Reservation that
//     says how long to wait (Delay) and can give the permit back (Cancel); a refused one's
//     Delay is the retry-after.
//   - Acquire takes a permit, waiting up to MaxWait for it on the caller's goroutine,
//     honouring the context.
//
// TryAcquireN, ReserveN and AcquireN take n permits together, for calls that cost more
// than one; a call for more than Permits can never pass and is refused with an error
// matching ErrExceedsBurst. Every other refusal matches ErrExceeded and is the limiter's
// preallocated *ExceededError, whose RetryIn says how long until its next permit is free.
// Reconfigure changes a running limiter's quota; a raised quota gives its next permit
// within one new T.
//
// In a composition, resilience.RateLimiter builds the limiter (NewPolicy decorates with
// one directly); a registry observes it, reloads its configuration and hands it out
// (resilience.Registry.RateLimiter). Its events are EventRejected and EventWaited.
//
// Where the rest lives:
//   - package ratelimit/keyed is a limiter per key (client id, IP address, API key), with
//     Decide for HTTP and gRPC servers (resiliencehttp.NewMiddleware,
//     resiliencegrpc.Limit);
//   - package ratelimit/redis keeps a limiter's state in Redis (WithBackend), so that every
//     instance of a service shares one quota;
//   - package ratelimit/backend is the contract such a store implements.
package ratelimit
