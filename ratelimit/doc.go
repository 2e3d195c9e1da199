// Package ratelimit is resilience4go's rate limiter: at most Permits calls per Period pass,
// and the rest are rejected at once or wait up to MaxWait for their turn.
//
// The algorithm is GCRA, the "meter" form of a token bucket. Permits are evenly spaced one
// emission interval T = Period/Permits apart, rounded up to a whole nanosecond; unused
// permits accumulate up to a burst of Permits; after the burst, calls pass at one every T.
// So in any window of length d at most Permits + floor(d/T) calls pass: a window of one
// period can see 2×Permits calls, a full burst and then the steady rate.
//
// The state is one int64, the TAT (theoretical arrival time), moved by compare-and-swap:
// no mutex, no background goroutine, one clock read per call. A reservation canceled
// while later ones stand behind it leaves its slot of the schedule free; the next call
// that fits takes it, and only while such a slot is held do calls take a lock.
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
// TryAcquireN, AcquireN and ReserveN take n permits together, for calls that cost more
// than one (a batch of n records, a request of n tokens). A call for more than Permits
// can never pass and fails with ErrExceedsBurst.
//
// Every rejection matching ErrExceeded is an *ExceededError, made once per limiter, whose
// NextPermit reads how long until the limiter's next permit is free, at the moment it is
// asked. A retry with WaitForPermit waits for it.
//
// Reconfigure changes a running limiter's Permits, Period, MaxWait and Disabled from the
// next call (Resilience4j's changeLimitForPeriod, x/time/rate's SetLimit and SetBurst); a
// registry's Reload calls it. What the limiter owes is owed again at the new rate, as a
// token bucket keeps its tokens: a raised quota gives its next permit within one new
// emission interval. Reservations already granted keep their turn, and a change never
// frees more permits at once than were free before it. A Backend's store converts what it
// owes at the first call that brings the new rate (see Limiter.Reconfigure).
//
// A Limiter limits the calls of one process, unless it is built WithBackend: its
// state then lives in a shared store, e.g. Redis (package ratelimit/redis), and every
// instance of a service that uses the same name shares one quota. The choice is made once,
// when the limiter is built: an in-process limiter pays nothing for it.
//
// # Per-key limits
//
// Keyed holds one limiter cell per key (client id, IP address, API key). TryAcquire,
// Acquire, Reserve and AvailablePermits take the key; Decide is TryAcquire that also
// reports what HTTP rate-limit headers carry (the limit, the permits left, the
// retry-after), which is all that per-client HTTP middleware needs, together with Config.
//
// Cells are made when a key is first seen. A cell is idle when its TAT is at or before
// now: every permit its key took is back — at the latest one Period after its last call,
// sooner when it took fewer than Permits. An idle cell admits a full burst, exactly as a
// new cell does: it holds no memory of the past, so keeping it or evicting it changes no
// decision. Cells are therefore kept until their place is needed, and a client that comes
// back after a quiet spell finds its cell and allocates nothing. Nothing is evicted on a
// schedule and no goroutine runs; Sweep evicts every idle cell when asked (e.g. from a
// timer, to give memory back sooner).
//
// Memory is bounded by MaxKeys: one count of the keys held, over all shards, which never
// exceeds MaxKeys, even for an instant, and up to MaxKeys keys are all held however
// their hashes fall. Keys are spread over shards, each with its own index and its own
// lock for writers: at least 64 (fewer for a MaxKeys under 1,024), and enough for each to
// hold about 768 keys at the bound (up to 4,096 shards), so that each shard's index stays
// at 1,024 slots about three quarters full and the memory per key at the bound does not
// grow with MaxKeys (about 72 bytes per key of 16 bytes or less, from 50,000 to 1,000,000
// keys). A new key that finds MaxKeys keys held is never refused for
// the lack of room: it takes the place of one cell of its own shard, an idle one when it
// meets one among 8 taken at random, else the one of those 8 that becomes idle first;
// when its shard holds no cell, it evicts one from another shard, locking one shard at a
// time. So a flood of distinct keys (a spoofing attack, or the addresses of an IPv6
// prefix) locks out no client, new or held, and costs O(1) per new key. The price is paid
// by the keys evicted before they were idle: such a key's next call starts a new cell,
// with a full burst, so it may pass up to Permits more calls than its quota in that
// period. A key that has spent its quota has its TAT far ahead and is evicted after the
// keys that made one call each, which is what a flood makes. The limiter then still
// bounds each key that it holds, and the memory; bound the rate of all keys together with
// a Limiter in front of it. A cell is never reused for another key: cancelling a
// reservation of a key evicted since gives its permit to no one.
//
// Memory per key is bounded too: a string key longer than MaxKeyBytes (default 256
// bytes) is kept as its digest, "~sha256:" followed by the 64 hex digits of its SHA-256,
// and so is a key that starts with "~sha256:", so that no key kept as it is can stand for
// another's digest. Two different keys share a quota only if their SHA-256 collide,
// which no client can bring about. Such a key costs a hash of its bytes and one
// allocation at each call. Keys of types other than strings are kept as they are; a key
// type that holds strings of its own (a struct) should hold short ones.
//
// A call for a key that has a cell finds it in its shard's index without a lock and
// without writing to memory that other calls share, does one compare-and-swap on the
// key's schedule, and allocates nothing, idle or not: calls for different keys, or many
// calls for one hot key, contend on nothing else. A new key, eviction and Sweep hold the
// shard's lock; a call that misses its key while one of them moves entries of its shard
// looks again under the lock. An evicted cell is marked dead first, so a call that found
// it just before takes nothing from it and looks its key up again. A new key allocates its entry
// (48 bytes in-process, with a string key of up to 16 bytes inside it; a longer string key
// is copied, so that a key cut from a larger string, such as a header, does not keep it
// alive). Keys must be equal to themselves: a NaN (or a value holding one), which no call
// could find again, is refused by every call with CodeBadKey, as is an interface key
// holding a value that cannot be compared; see Keyed. A shard whose index falls to a sixteenth of its slots is rebuilt smaller when it
// sweeps.
//
// Events of a Keyed limiter name the key in Event.Key: a string key as the limiter keeps
// it (a long one as its digest), any other key formatted with fmt.Sprint (its String
// method, when it has one). Formatting a key that is not a string allocates, on the
// paths that publish an event and only when a listener is set.
//
// With a Backend (WithBackend), each key's state lives in the backend, bound with the
// instance id "<id>:<key>" (the key named as in events): every process that uses the
// same limiter id shares each key's quota, one backend entry per key. A call then asks
// the key's Store, outside the shard's lock; a store that answers Local falls back on the
// key's in-process cell. A cell counts as busy for one Period after its last use, so
// that at the bound the keys in use keep their binding; a cell evicted before that loses
// only its binding, as the key's state is the backend's.
// Backend ids share one namespace: a Limiter named "api:10.0.0.1" shares the quota of key
// "10.0.0.1" of a Keyed limiter "api", and keys whose fmt.Sprint is the same (the int 1
// and the string "1" of a Keyed[any]) share one backend entry; choose names accordingly.
//
// # Outcomes
//
// With a recorder (Observe, or a registry's observer), each admission decision is
// recorded once, with the context of the call: observe.ResultAdmitted with Wait = the wait
// the call reserved (0 when its permit was free at once), or observe.ResultRejected with
// Err = the refusal (a rejection matching ErrExceeded, also for a call refused on arrival
// for its nil or done context, or a *BurstError). Every method that decides records:
// TryAcquire, Acquire and Reserve and their N forms, Decide and the decorated calls; the
// methods that take no context record with context.Background() (DecideContext is Decide
// with the request's context), and so does a call with a nil context. Acquire records once the permit is the caller's, after its wait, or
// once the call is refused; Reserve when it reserves (a later Cancel records nothing); an
// asynchronous decorated call when next starts or the call is refused, and nothing when
// its future is canceled before its turn. A Keyed limiter's outcomes carry the key in
// Outcome.Key, named as in its events. A disabled limiter, and a zero one, record
// nothing.
//
// Every event goes to the recorder too, with the context of the call that caused it; a
// ConfigChanged, and the events a Backend's stores publish, with context.Background().
// Without a recorder, recording costs a nil check; with one, a decision allocates nothing
// more (but for a Keyed key that is not a string, formatted as for its events).
package ratelimit
