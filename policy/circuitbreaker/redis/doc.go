// Package redis shares circuit breakers among the processes of a service through Redis:
// give the Fleet New returns to circuitbreaker.WithFleet, and the breakers of the same
// Name, in every process, move together.
//
//	client := goredis.NewClient(&goredis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
//	fleet, err := cbredis.New(client)
//	defer fleet.Close()
//	b, err := circuitbreaker.New(circuitbreaker.Name("inventory"), circuitbreaker.WithFleet(fleet))
//
// Each name has one key, "{r4c:cb:inventory}" (a hash: state, epoch, and the half-open
// trials' tickets and outcomes), changed only by Lua scripts, and one channel in the
// same hash slot, "{r4c:cb:inventory}:t", on which every transition is announced with
// SPUBLISH (sharded Pub/Sub: Redis 7.0 or later; on a Redis Cluster both live on the
// node of the name's slot, and a failure of another node does not concern them). The
// epoch counts the transitions: each one is a compare-and-set on it, so two instances
// that open at once make one transition, and the other takes it.
//
// How the instances move together:
//   - closed to open: the instance whose window opens it opens at once, and hands the
//     transition to the fleet's sending goroutine (the call does not wait on Redis);
//     the others are told by the channel and open.
//   - open to half-open: each instance counts WaitInOpen from when it opened or was told;
//     the first whose wait is over, on its next call, moves the fleet to half-open with
//     its first trial's ticket, and the others follow.
//   - half-open: each trial call takes a ticket from the key, on the call's path (one
//     round trip, bounded by Timeout): at most PermittedInHalfOpen in all, fleet-wide.
//     Each trial's outcome is counted in the key; the one that completes the trials
//     decides, by the breaker's thresholds, closed or open again, for the fleet.
//   - half-open for longer than MaxWaitInHalfOpen (a trial stuck), TransitionTo and
//     Reset to Closed or Open: proposed like an opening. Disabled and forced-open are an
//     instance's own and are not shared.
//
// Consistency: the key is the fleet's state; an instance's breaker may differ from it
//   - while a transition travels: from the instance that made it to the key (one
//     script run, a round trip, sent by the fleet's goroutine), then on the channel to
//     the others (one delivery, which Redis writes as it answers the script): the others
//     have it one round trip of the network after the transition, plus the time each
//     process takes to run the goroutines involved (on one loaded machine, most of it).
//     Calls an instance admits meanwhile are
//     those of its own state; in half-open, no more than PermittedInHalfOpen trials run
//     in all, whatever the instances believe, as each needs a ticket from the key;
//   - in the open state's length: each instance counts WaitInOpen from when it learnt
//     of the opening, so their waits end up to that delay apart; the first ends it for all;
//   - while Redis does not answer (or a subscription reconnects): each instance's breaker
//     goes on alone, as one without a fleet (its own window, its own trials in a
//     half-open the fleet could not count), sends nothing, and reads the key every 100ms
//     until Redis answers; then the key wins: the instance takes its state, and what it
//     did alone is not sent. A joining instance reads the key once subscribed.
//
// Each breaker that joins has a goroutine that follows its channel; the fleet has one
// that sends transitions. Close stops them (the breakers go on alone).
package redis
