// Package keyed is a rate limiter per key: one GCRA limiter cell for each client id, IP
// address or API key, with package ratelimit's rules and options (see Limiter). It is what
// per-client servers use: resiliencehttp.NewMiddleware and resiliencegrpc.Limit ask its
// Decide for each request.
//
//	perClient, err := keyed.New[string](ratelimit.Permits(10), ratelimit.Period(time.Second))
//	...
//	if d := perClient.Decide(r.Context(), clientIP); !d.Admitted {
//		// 429, with Retry-After: d.RetryAfter
//	}
//
// TryAcquire, Reserve and Acquire take n permits for a key, as a ratelimit.Limiter's
// methods do. Keys do not share permits, and memory is bounded (Bounds, default 100,000
// keys): a new key at the bound takes the place of an idle key, or of the one soonest
// idle, so a flood of new keys locks out no client. With a backend
// (ratelimit.WithBackend), such as package ratelimit/redis, each key's quota is shared
// by every process.
//
// Where the detail lives:
//   - Limiter: cells and when they are idle, eviction at the bound and its price, the
//     cost of a call, the key in events, keys that are not equal to themselves, and
//     the backend's ids;
//   - Bounds: the bound on keys, the memory per key, and the digest of long string keys;
//   - Decide and Decision: what HTTP rate-limit headers report;
//   - Sweep: evicting idle cells when asked; Observe: per-key outcomes (resilienceotel);
//   - PerKey and SetLimit: per-tenant limits, a key's own (permits, period) pairs, given
//     by a function of the key when its cell is made, or changed for one key at run time.
//   - ShadowRejected: shadow mode (ratelimit.Shadow), in which no call is refused.
package keyed
