// Package resiliencehttp puts resilience4go on both sides of HTTP, as the standard small
// pieces: server middleware, a func(http.Handler) http.Handler, that stops one client
// from flooding a shared service; and a client transport, an http.RoundTripper, that
// keeps a client within a dependency's quota and rides out its failures.
//
// # Server: per-client limits
//
// NewMiddleware limits each client with a KeyedLimiter, usually a keyed.Limiter[string] (package ratelimit/keyed):
// one GCRA cell per key, with the semantics of ratelimit.Limiter, bounded memory, and idle
// keys evicted when their place is needed; any other store can implement the interface's two methods. The
// key is the client's network: its IPv4 address, or the /64 of its IPv6 address (every
// address a single host can rotate through), after making the address canonical
// (IPv4-mapped IPv6 as IPv4, zones dropped); IPv4Prefix and IPv6Prefix change the
// lengths. The address is the connection's RemoteAddr; X-Forwarded-For (or RFC 7239
// Forwarded) is read only when the proxies that write it are named with TrustedProxies,
// because any client can send it. KeyFunc keys by anything else (an API key, a user id),
// and falls back on the client where it returns "".
//
// A refused request is answered 429 Too Many Requests with Retry-After, the time until
// the client's next permit in whole seconds rounded up, and the RateLimit-Policy and
// RateLimit fields of draft-ietf-httpapi-ratelimit-headers-09 (the shape kept since
// revision -08):
//
//	HTTP/1.1 429 Too Many Requests
//	Retry-After: 1
//	Ratelimit-Policy: "default";q=10;w=1
//	Ratelimit: "default";r=0;t=1
//
// q is the limiter's Permits and w its Period in seconds (rounded up); r is the calls
// left now and t the seconds until the full quota is back (rounded up). LegacyHeaders
// adds X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset (by default a Unix
// time in seconds, as go-chi/httprate and GitHub's API send it). OnReject replaces the
// response, Exempt lets paths through unlimited, and AlwaysSendHeaders adds the fields
// to admitted responses too.
//
// A misconfiguration (a nil limiter, a prefix length out of range) is an error of
// NewMiddleware, never a panic.
//
// # Client: a dependency's quota
//
// NewTransport makes an http.RoundTripper that sends each request through a composition
// of the registry's policies, built
// once by resilience.Wrap1 in the default order (retry, circuit breaker, rate limiter,
// timeout, bulkhead, as configured; a resilience.Order spec names another) around another
// RoundTripper:
//   - it retries 429 Too Many Requests, 503 Service Unavailable and transport errors,
//     waiting what Retry-After says (seconds or an HTTP date) in place of the retry's
//     backoff (policy.RetryAfter);
//   - request bodies are replayed with Request.GetBody; a body that cannot be replayed
//     is sent once and not retried; transport errors of requests that are not idempotent
//     (POST and PATCH without an Idempotency-Key) are not retried either, as net/http
//     does;
//   - the bodies of failed attempts are drained (at most 256 KiB, within the attempt's
//     timeout and at most 1s) and closed, and when the retries are spent the caller gets
//     the last response (a 429 or a 503) as an ordinary *http.Response with its body, not
//     an error;
//   - the circuit breaker counts 5xx responses and transport errors as failures, and
//     not 4xx ones, when built with circuitbreaker.IgnoreOn(ErrNotFailure,
//     ratelimit.ErrExceeded);
//   - a request is never sent before the client rate limiter's permit is due: when the
//     limiter refuses an attempt, the retry waits for the limiter's next permit (at least
//     its own delay), so that the refusal costs one attempt and the next finds its permit.
//
// TransportConfig changes which statuses are retried and which are failures.
package resiliencehttp
