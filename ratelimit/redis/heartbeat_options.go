package redis

import (
	"time"

	"github.com/resilience4go/resilience4go/internal/r4c"
)

// minHeartbeat is the shortest Heartbeat: one beat every millisecond.
const minHeartbeat = 4 * time.Millisecond

// validateHeartbeat checks the Heartbeat option: R4C-ATR-004 when negative, R4C-ATR-007
// when on and shorter than 4·Timeout (a beat's round trip must fit between two beats) or
// 4ms.
func (c config) validateHeartbeat() error {
	switch {
	case c.Heartbeat < 0:
		return r4c.Errorf(r4c.NegativeDuration, "redis.heartbeat", c.Heartbeat.String(), "must not be negative")
	case c.Heartbeat > 0 && (c.Heartbeat < 4*c.Timeout || c.Heartbeat < minHeartbeat):
		return r4c.Errorf(r4c.OutOfRange, "redis.heartbeat", c.Heartbeat.String(),
			"must be 0 (off) or at least 4 times the timeout (%v) and 4ms", c.Timeout)
	}
	return nil
}

// Heartbeat makes the fair local share live: N, the count of instances that share each
// quota while Redis fails (see Instances), is the count of live instances of the service,
// as Redis last told it, instead of a number fixed at build time. Default 0: off, and N is
// Instances. Negative fails with R4C-ATR-004; below 4·Timeout or 4ms with R4C-ATR-007.
//
// With a heartbeat of expiry d, New starts one goroutine, which Close stops (and waits
// for): every d/4 it announces this instance (a random id made by New) in one key under
// the prefix, "{" + prefix + "}:instances" (e.g. {r4c:}:instances), a sorted set of the
// instances scored by the time their entry expires on the server's clock, in
// milliseconds: one script run, one round trip, bounded by Timeout, that adds or
// refreshes the instance's entry for 3d/4 (so that it outlives two lost beats), drops the
// expired entries, sets the key's TTL to the latest expiry, and returns the count of
// entries left, N. The goroutine starts at New, not at the first limiter's call, so that
// an instance is counted by the others from its start, whether or not it has served a call
// yet. Every instance that shares a quota must use the same prefix (as for the quota
// itself) and should use the same expiry. The key is one key, so it lives in one slot of a
// Redis Cluster and works unchanged there; the heartbeat's failures (its node down) are
// not published, not counted in the health of the nodes (see ProbeInterval), and change
// nothing but N's freshness: the limiters' calls report Redis's failures.
//
// What each instance sees: N is refreshed at every beat that Redis answers. While Redis
// answers, an instance that starts is counted by each other at its next beat, within d/4
// (the new one's first beat is at New); one that stops is dropped from each other's N
// within d/4 when it calls Close (which removes its entry, best effort, within Timeout),
// and within d of its stop (plus a round trip) when it crashes, its entry expiring; in
// between, the instances may see different counts (an outage that starts within d/4 of
// an instance's start may find some of the others not counting it yet, each then taking
// the share of a fleet of one instance fewer, instead of 1/N, until Redis answers). While
// Redis fails (for the whole backend: the instances key is on one node), each instance
// keeps the N it last saw: it takes 1/N of each quota, and the N instances it saw
// together stay within the shared quota, plus one local burst each (Instances says how).
// An instance cannot learn during an outage that another stopped, so that one's share is
// left unused until Redis answers again: the fleet then admits less than the quota, never
// more. One that starts during an outage, before its first beat is answered, takes
// 1/Instances, the floor, and the others do not count it: set Instances to the fleet's
// usual size, so that a start during an outage stays near the quota. When Redis answers
// again, the limiters are back on the shared quota at once (their calls decide on Redis),
// and N is fresh within d.
//
// It has no effect with a failure policy other than backend.Local (no goroutine starts).
// The heartbeat's calls to Redis are bounded by Timeout with a client that has
// ContextTimeoutEnabled; with another client, a beat may wait for the client's own read
// timeout, and so may Close.
func Heartbeat(expiry time.Duration) Option { return func(c *config) { c.Heartbeat = expiry } }
