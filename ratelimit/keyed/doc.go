// Package keyed is a rate limiter per key: one GCRA limiter cell for each client id, IP
// address or API key, with package ratelimit's rules and options (see Limiter). It is what
// per-client servers use: resiliencehttp.Middleware and resiliencegrpc.Limit ask its
// Decide for each request.
//
//	perClient, err := keyed.New[string](ratelimit.Permits(10), ratelimit.Period(time.Second))
//	...
//	if d := perClient.Decide(r.Context(), clientIP); !d.Admitted {
//		// 429, with Retry-After: d.RetryAfter
//	}
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
// Memory is bounded by the number of keys of Bounds (default 100,000): one count of the
// keys held, over all shards, which never exceeds the bound, even for an instant, and up
// to that many keys are all held however their hashes fall. Keys are spread over shards,
// each with its own index and its own lock for writers: at least 64 (fewer for a bound
// under 1,024), and enough for each to hold about 768 keys at the bound (up to 4,096
// shards), so that each shard's index stays at 1,024 slots about three quarters full and
// the memory per key at the bound does not grow with the bound (about 72 bytes per key of
// 16 bytes or less, from 50,000 to 1,000,000 keys). A new key that finds the bound reached
// is never refused for the lack of room: it takes the place of one cell of its own shard,
// an idle one when it meets one among 8 taken at random, else the one of those 8 that
// becomes idle first; when its shard holds no cell, it evicts one from another shard,
// locking one shard at a time. So a flood of distinct keys (a spoofing attack, or the
// addresses of an IPv6 prefix) locks out no client, new or held, and costs O(1) per new
// key. The price is paid by the keys evicted before they were idle: such a key's next call
// starts a new cell, with a full burst, so it may pass up to Permits more calls than its
// quota in that period. A key that has spent its quota has its TAT far ahead and is
// evicted after the keys that made one call each, which is what a flood makes. The limiter
// then still bounds each key that it holds, and the memory; bound the rate of all keys
// together with a ratelimit.Limiter in front of it. A cell is never reused for another
// key: cancelling a reservation of a key evicted since gives its permit to no one.
//
// Memory per key is bounded too: a string key longer than the key bytes of Bounds (default
// 256 bytes) is kept as its digest, "~sha256:" followed by the 64 hex digits of its
// SHA-256, and so is a key that starts with "~sha256:", so that no key kept as it is can
// stand for another's digest. Two different keys share a quota only if their SHA-256
// collide, which no client can bring about. Such a key costs a hash of its bytes and one
// allocation at each call. Keys of types other than strings are kept as they are; a key
// type that holds strings of its own (a struct) should hold short ones.
//
// A call for a key that has a cell finds it in its shard's index without a lock and
// without writing to memory that other calls share, does one compare-and-swap on the key's
// schedule, and allocates nothing, idle or not: calls for different keys, or many calls
// for one hot key, contend on nothing else. A new key, eviction and Sweep hold the shard's
// lock; a call that misses its key while one of them moves entries of its shard looks
// again under the lock. An evicted cell is marked dead first, so a call that found it just
// before takes nothing from it and looks its key up again. A new key allocates its entry
// (48 bytes in-process, with a string key of up to 16 bytes inside it; a longer string key
// is copied, so that a key cut from a larger string, such as a header, does not keep it
// alive). Keys must be equal to themselves: a NaN (or a value holding one), which no call
// could find again, is refused by every call with R4C-RLM-001, as is an interface key
// holding a value that cannot be compared; see Limiter. A shard whose index falls to a
// sixteenth of its slots is rebuilt smaller when it sweeps.
//
// Events of a keyed limiter name the key in Event.Key: a string key as the limiter keeps
// it (a long one as its digest), any other key formatted with fmt.Sprint (its String
// method, when it has one). Formatting a key that is not a string allocates, on the paths
// that publish an event and only when a listener is set.
//
// With a backend (ratelimit.WithBackend), each key's state lives in the backend, bound
// with the instance id "<id>:<key>" (the key named as in events): every process that uses
// the same limiter id shares each key's quota, one backend entry per key. A call then asks
// the key's store, outside the shard's lock; a store that answers Local falls back on the
// key's in-process cell. A cell counts as busy for one Period after its last use, so that
// at the bound the keys in use keep their binding; a cell evicted before that loses only
// its binding, as the key's state is the backend's. Backend ids share one namespace: a
// ratelimit.Limiter named "api:10.0.0.1" shares the quota of key "10.0.0.1" of a keyed
// limiter "api", and keys whose fmt.Sprint is the same (the int 1 and the string "1" of a
// Limiter[any]) share one backend entry; choose names accordingly.
package keyed
