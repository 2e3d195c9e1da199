// Package resilience is where resilience4go's policies meet: a Registry that owns the
// clock, the configuration keys and the policy instances; Wrap functions and Pipelines
// that compose policies; lookups, snapshots and events.
//
// # Order
//
// By default the layers are composed in this order, outermost first, whatever order the
// specs are given in:
//
//	Fallback → RetryBudget → Retry or Hedge → CircuitBreaker → RateLimiter → Timeout →
//	Bulkhead → AdaptiveLimit → the function
//
// A hedge takes the retry's place (see Hedge for what it guards). Order, given with the
// specs, or the configuration key instances.<id>.composition.order, names another order;
// the fallback always stays outermost. A user's own policy, any policy.Policy[T], joins
// a composition with Use, at a layer name of its own. The composition is built once,
// when a function is wrapped or a pipeline is built, so a call through it costs only the
// policies' own work (see Wrap).
//
// # Instances and configuration
//
// Instances are identified by id: the id given to Wrap or NewPipeline, or the Name option
// of a spec, which shares one instance among every function that uses it; two functions
// that share a name must resolve the same configuration (R4C-REG-008). Attributes come
// from code and from configuration keys, lowest precedence first: built-in defaults,
// defaults.<policy>.<attr>, options in code, configs.<name>.<policy>.<attr>,
// instances.<id>.<policy>.<attr>. LoadProperties, LoadYAML and FromEnv read keys;
// NewRegistry checks every one of them. Reload replaces the keys of a running registry
// and applies them to every instance, all or nothing (see Reload for what can change).
//
// # Lookups, snapshots and events
//
// Lookup returns a policy instance itself, by layer and id, once a function using it
// was wrapped, and Registry.RateLimiter a limiter's read-only ratelimit.Handle; Snapshot
// returns the state of every instance; WithEventListener receives every policy's events.
package resilience
