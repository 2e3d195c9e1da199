// Package redis keeps rate limiters' state in Redis (a backend, see package
// ratelimit/backend): the rate limiters of every instance of a service share one quota,
// e.g. a dependency that allows 10 requests per second in total, whatever the number of
// instances calling it. Give the backend New returns to ratelimit.WithBackend, to a keyed
// limiter's options, or to a registry with resilience.WithRateLimiterBackend:
//
//	client := goredis.NewClient(&goredis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
//	shared, err := rlredis.New(client, rlredis.Prefix("search-service:"))
//	reg, err := resilience.NewRegistry(resilience.WithRateLimiterBackend(shared))
//
// Every limiter, in every process, that has the same name and the same Prefix shares one
// quota, and must be configured with the same Permits and Period. It keeps the rules of
// an in-process limiter (package ratelimit), decided by a Lua script on the Redis
// server's clock: one round trip per call, or per batch of concurrent calls. While Redis
// fails, the failure policy decides (OnFailure): by default each instance limits itself.
// Further windows (ratelimit.Windows("10/1s, 1000/24h")) work on Redis too, each in a key
// of its own under the limiter's hash tag, decided in the same script run. With Leases,
// a busy limiter reserves its permits in batches and decides from them in-process, the
// shared bound kept exactly.
//
// Where the detail lives:
//   - New: the semantics on Redis (batching, weighted calls, reconfiguration, canceled
//     reservations), sharing a quota, the clients it takes and Redis Cluster;
//   - Prefix: the layout of the keys;
//   - Timeout, OnFailure and ProbeInterval: the bound of a call, what is a failure,
//     the health of each node, the events, and keys that hold bad data;
//   - Instances: each instance's fair share of the quota while Redis is down;
//   - Heartbeat: that share live, from the count of instances announced in Redis.
//   - Leases: decisions from leases of permits, their guarantee and their price.
package redis
