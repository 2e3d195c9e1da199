// Package ratelimit is resilience4go's rate limiter: at most Permits calls per Period pass,
// and the rest are rejected at once or wait up to MaxWait for their turn.
//
// The algorithm is GCRA, the "meter" form of a token bucket. Permits are evenly spaced one
// emission interval T = Period/Permits apart, rounded up to a whole nanosecond; unused
// permits accumulate up to a burst of Permits; after the burst, calls pass at one every T.
// So in any window of length d at most Permits + floor(d/T) calls pass: a window of one
// period can see 2×Permits calls, a full burst and then the steady rate.
//
// The whole mutable state is one int64, the TAT (theoretical arrival time), moved by
// compare-and-swap: no mutex, no background goroutine, one clock read per call.
//
// Three ways to take a permit:
//   - TryAcquire takes a permit that is free now, or reports false. Most callers that
//     must not wait want this.
//   - Acquire takes a permit, waiting up to MaxWait for it on the caller's goroutine,
//     honouring the context.
//   - Reserve takes a permit within MaxWait without waiting and returns a Reservation that
//     says how long to wait and can be canceled; a refused Reservation says how long
//     until the next permit (the retry-after).
//
// A Limiter limits the calls of one process, unless it is built WithBackend: its
// state then lives in a shared store, e.g. Redis (package ratelimit/redis), and every
// instance of a service that uses the same name shares one quota. The choice is made once,
// when the limiter is built: an in-process limiter pays nothing for it.
//
// # Per-key limits
//
// Keyed holds one limiter cell per key (client id, IP address, API key).
//
// Cells are made when a key is first seen and evicted when idle. A cell is idle when its
// TAT is at or before now: every permit its key took is back — at the latest one Period
// after its last call, sooner when it took fewer than Permits. An idle cell would admit a
// full burst, exactly as a new cell does: it holds no memory of the past, so evicting it
// changes nothing.
// Eviction is lazy, with no goroutine: a shard evicts its idle cells when it is full, and
// once it has added as many cells as it held at its previous sweep (so sweeping costs
// O(1) per new key, amortised). Sweep evicts every idle cell at once.
//
// Memory is bounded by MaxKeys. Keys are spread by hash (hash/maphash) over up to 64
// shards, each holding at most MaxKeys/shards of them, so Len never exceeds MaxKeys. When
// a new key finds its shard full, the shard first evicts its idle cells; if none is idle,
// the new key is refused with the limiter's rejection (TryAcquire reports false,
// Reserve returns ErrExceeded) whose retry-after is the instant the shard's first cell
// becomes idle. Refusing new keys never admits more than the configured rate for any
// key; it may refuse a key that has not spent its quota, which is the price of a bound
// on memory under a flood of distinct keys (a spoofing attack). Keys already held are
// not affected by the flood. A new key may be refused a little before Len reaches
// MaxKeys, when its own shard is full.
//
// A call for a key that has a cell takes its shard's read lock, does one map lookup and
// one compare-and-swap, and allocates nothing. A new key allocates its cell; a string
// key is copied, so that a key cut from a larger string (a header) does not keep it
// alive. Keys must be equal to themselves: a floating-point NaN key is a new key at
// every call. Go maps do not shrink, so a shard whose cells fall to a quarter of its peak
// rebuilds its map when it sweeps.
//
// With a Backend (WithBackend), each key's state lives in the backend, bound with the
// instance id "<id>:<key>" (a key other than a string is formatted with fmt.Sprint): every
// process that uses the same limiter id shares each key's quota, one backend entry per
// key. A call then asks the key's Store, outside the shard's lock; a store that answers
// Local falls back on the key's in-process cell. Cells are kept for one Period after
// their last use, so that a busy key binds its store once.
// Backend ids share one namespace: a Limiter named "api:10.0.0.1" shares the quota of key
// "10.0.0.1" of a Keyed limiter "api", and keys whose fmt.Sprint is the same (the int 1
// and the string "1" of a Keyed[any]) share one backend entry; choose names accordingly.
//
// A key that would make a full shard hold more than its share of MaxKeys is refused until
// one of the shard's cells is idle; the shard learns that from the TAT of the cells it
// holds, so a cell made idle early by a canceled reservation is found at the shard's next
// sweep, not at once: until then the refusal errs on the safe side.
package ratelimit
