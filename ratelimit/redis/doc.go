// Package redis keeps rate limiters' state in Redis (a backend, see package
// ratelimit/backend): the rate limiters of every instance of a service share one quota,
// e.g. a dependency that allows 10 requests per second in total, whatever the number of
// instances calling it. Give the backend New returns to ratelimit.WithBackend, to a keyed
// limiter's options, or to a registry with resilience.WithRateLimiterBackend.
//
// # Semantics
//
// A limiter keeps the same rules as in-process: a burst of Permits, then one permit every
// T = Period/Permits (rounded up to a whole nanosecond, so that rounding never admits
// more than the configured rate), rejection with the limiter's own error matching
// ratelimit.ErrExceeded, reservations within MaxWait, the retry-after of a refused call,
// weighted calls (TryAcquireN, AcquireN, ReserveN), live reconfiguration, canceled
// reservations giving their permits back, and AvailablePermits and Snapshot. The GCRA
// state, one TAT per limiter name, lives in Redis, and every decision is made by a Lua
// script run with EVALSHA (EVAL when the server does not know the script yet). A lone call
// is one script run, sent at once: one round trip. Calls of one limiter (or one key of a
// keyed limiter) that come while one of its runs is in flight queue, and go together in
// the next run, up to 64 per run, as soon as that one is back: the script decides them
// one after the other, in their order of arrival, each against the TAT the one before
// left, so each gets exactly the answer it would get alone at that instant, and many
// concurrent calls cost one round trip. A queued call whose context ends stops waiting;
// a permit its run reserved for it is given back. When a run fails, each of its calls
// takes the failure policy, as if it had failed alone. Time comes from Redis TIME inside the script, so the clients' clocks may
// disagree; a caller that must wait for its reserved permit waits locally, on its own
// clock. The script's arithmetic is exact: times are (seconds, nanoseconds) pairs of
// integers, so no value ever leaves the range in which Lua's numbers are exact.
//
// A call for n permits takes a slot of n·T of the schedule: at the TAT, which moves by
// n·T, or in the slot of a canceled reservation (below); its permits are free after
// max(slot start, now) - now - (Permits-n)·T, and it is refused, taking nothing, when that
// is more than the call may wait; the retry-after is then that wait. Each call brings the
// limiter's configuration in force, so the rate is the call's, and the TAT key holds the
// rate it is written at. The first call (a reserve or AvailablePermits) that brings
// another rate converts the schedule in the same script run, as an in-process limiter
// converts it at Reconfigure: what it owes, the part of [now, TAT) that granted permits
// hold (freed slots excepted), is counted in permits of the old rate, fractions included,
// and owed again as that many permits of the new one, or the whole permits free at that
// call stay free when more, within the new burst; the freed slots are dropped. So 1
// permit per hour, spent, then raised to 10 per second gives its next permit within
// 100ms, and a lowered quota owes its spent permits at its own, slower, rate. The same
// calls give the same answers on Redis and in-process, at the instants Redis decides
// them. The conversion computes in nanoseconds as Lua numbers (doubles): exact while
// Permits·T of both rates and the TAT's lead over now stay below 2^53 ns (about 104
// days), the conversion of a partial permit from one T to the other to within a
// nanosecond; beyond, rounded to a double. A schedule that owes nothing (no key, or a
// TAT at or before now) admits the new burst at once. Reservations granted before a
// conversion keep their turn, and give nothing back when canceled after it: each
// reservation's grant carries the count of conversions the key had made when it was
// granted (backend.Grant.Epoch), and the cancel gives nothing back when the key's count
// has moved. A key written by an earlier version of this package holds a bare TAT, with
// no rate: it is read at the call's rate, not converted, and written with the rate at the
// next call that moves it. A call that read the old configuration just before the change
// and reaches Redis after the first call at the new one converts the schedule back to the
// old rate, and the next call at the new rate converts it again: each conversion keeps
// what is owed, within the burst of its rate, but not the freed slots. The limiter's
// in-process share, used while Redis is down with the Local policy, is converted at
// Reconfigure.
//
// A canceled reservation gives its permits back as long as their time has not passed on
// the server's clock: when it is the last one reserved (the TAT is its end), the TAT moves
// back to its start, and on over a freed slot that ends there; when later reservations
// stand behind it, its slot, from now on, is kept as a freed slot, and the next call that
// fits there (the earliest freed slot that holds its n·T, and whose permit time is within
// its wait) takes it before appending at the TAT. Every permit so holds a slot that no
// other holds, starting at or after its permit time and ending at most Permits·T after
// it, so that no window of length d sees more than Permits + floor(d/T) permits. At most
// 16 freed slots are kept per limiter (freed slots that touch are joined): a cancel that
// would make one more gives nothing back.
//
// # Key layout
//
// Two keys per limiter name. The TAT key is "{" + prefix + name + "}", e.g.
// {r4c:geocoding} with the default prefix "r4c:". Its value is the TAT as a decimal count
// of nanoseconds since the Unix epoch on the server's clock, then the rate it is written
// at and the count of its conversions (Semantics), one space apart: T in nanoseconds,
// Permits, and the count, e.g. "1767225600100000000 100000000 10 0" (a bare TAT, as
// earlier versions wrote it, is still read); its TTL is the time until the
// burst is full again (the TAT, rounded up to a millisecond), so an idle limiter leaves no
// key behind and an absent key means a full burst. The freed-slots key is the TAT key
// followed by ":freed", e.g. {r4c:geocoding}:freed: it exists only while a canceled
// reservation's slot is free, and holds the freed slots as "start-end" pairs one space
// apart, each time in seconds since the Unix epoch with exactly 9 decimals (e.g.
// "1767225600.250000000-1767225600.750000000"), sorted, each ending before the TAT; its
// TTL is the time until the last one ends. The script reads it only while the TAT is ahead of now, and
// deletes it when it takes a permit with no TAT key (whatever it holds). Each script
// touches exactly those two keys, and the braces make the TAT key their Redis Cluster
// hash tag, so both are in one slot and the layout works unchanged on a cluster.
//
// Every limiter, in every process, that uses the same name and the same prefix shares
// one quota; they must be configured with the same Permits and Period. While a change of
// configuration reaches them one by one, each call is decided at its own limiter's rate,
// on the one shared TAT, converted to that rate when the key was written at another: so
// instances configured differently for one name convert the key back and forth at every
// call that alternates between them, each conversion dropping the freed slots and
// rounding what is owed within the burst of its rate; their quota is then neither one
// nor the other.
//
// # Failures
//
// Each round trip to Redis is bounded by Timeout, 50ms by default. A call that finds
// another call of its limiter (or key) in flight waits for that one's round trip before
// its own goes (see Semantics), so it may wait up to about twice the timeout, and
// more behind a queue of over 64 calls. When Redis fails or answers too late, the limiter publishes backend.EventFailed and applies the failure policy
// until Redis answers again: Local (the default) decides with an in-process limiter of
// the same configuration (each instance then limits itself; Instances gives each a fair
// share of the quota instead), Admitted lets every call pass, Refused refuses every call
// (see OnFailure). No round trip waits for Redis longer than the timeout, whatever the client's own
// timeouts; when Redis did not answer in time, the event's Err matches
// context.DeadlineExceeded. Redis's failures are a refused or dropped connection, a
// timeout, and every error reply other than the data errors below (e.g. LOADING,
// READONLY, OOM or BUSY).
//
// Health follows the unit that fails: the node that holds a limiter's keys. For a
// *redis.Client that is its server; for a *redis.ClusterClient, the master that owns the
// keys' slot in the client's slot map; for a *redis.Ring, the keys' shard; for any other
// client, the backend as a whole. A node that fails sends only the keys it holds to the
// failure policy: the keys of the other nodes keep their exact shared quotas. While a
// node is down, only one call per ProbeInterval (1s by default) for that node, whatever
// its limiter or key, tries it again; the others whose keys it holds take the failure
// policy at once. The limiter whose call finds a node down publishes
// backend.EventFailed, and the one whose call the node answers again publishes
// backend.EventRecovered: one of each per node and outage, with the attribute
// "node" the node's address. A node down that no call reaches any more (its
// slots moved away, or a replica took its place) is pinged, when its probe is due, by a call of another node
// (with a client that has ContextTimeoutEnabled, which bounds the ping), so that its
// outage ends too. While every node answers, calls pay nothing for this (no slot
// lookup); while one is down, each limiter looks its keys' node up at most once per
// probe interval, from the client's slot map in memory. The events of the nodes reach the
// listeners one at a time, in the order of the changes, possibly on the goroutine of
// another call that is publishing them, just after the call that caused one returns.
//
// # Redis Cluster
//
// The braces of the TAT key make "prefix + name" its hash tag: a limiter's two keys live
// in one slot, which every script call touches alone, so the backend works unchanged on a
// cluster, and the limiters (and the keys of a keyed limiter) spread over the slots by
// name. When a slot moves (resharding), the client follows the cluster's MOVED and ASK
// redirections, and the script runs where the keys are, with no quota lost. With a
// *redis.ClusterClient, a call whose slot is still moving once the client's redirections
// ran out (MOVED, ASK, or TRYAGAIN during a migration) runs the script again, up to 3 more
// times within the timeout, and then takes the failure policy alone: the nodes answered,
// so none is marked down and no event is published. A client that does not follow
// redirections (a *redis.Client of one cluster node) gets them on every call: a failure of
// that node. When a master fails and a replica takes over, its keys' calls take the
// failure policy until the client's slot map names the new master. A cluster that must
// keep serving the healthy nodes' slots while one node is down needs
// cluster-require-full-coverage no: otherwise Redis itself refuses every key once a slot
// has no node. Give the ClusterClient ContextTimeoutEnabled, so that Timeout bounds each
// call without a helper goroutine.
//
// A data error is one limiter's keys', not Redis's: a key holds another type (Redis
// answers WRONGTYPE), the TAT key a string that is not a TAT (1 to 24 decimal digits; the
// script answers BADTAT), or the freed-slots key, while it is read, a string that is not
// freed slots as above (at most 16, each start before its end, each end before the next
// start, seconds below 10^12; the script answers BADSLOTS). The script then
// writes nothing. Redis answered, so every other limiter and key stays on Redis, and none
// of the events above is published. Only that limiter's calls apply the failure policy;
// it publishes backend.EventKeyFailed, with Key its TAT key (e.g. {r4c:geocoding})
// and Err the error, which names the key at fault, once until its keys answer well again.
// While they are bad, one of its calls per ProbeInterval tries them again, the others
// take the failure policy at once. The values are never overwritten: once the key at
// fault is deleted (a missing TAT key is a full burst, a missing freed-slots key no freed
// slot) or holds a valid value again, the limiter is back on Redis, without an event.
package redis
