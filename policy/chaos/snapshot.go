package chaos

import "time"

// Snapshot is a chaos policy's state, as Chaos.Snapshot reads it.
type Snapshot struct {
	Instance string        // the instance id
	Enabled  bool          // whether it injects, now
	Rate     float64       // the probability of an injection, in force now
	Latency  time.Duration // the latency injected, in force now
	// The injections since the policy was built, by kind: the calls failed with an
	// error (Error's, or ErrInjected), answered with Result's result, delayed, and run
	// through Behavior. An injected call may count in several (a latency, then an error).
	Errors, Results, Latencies, Behaviors uint64
}

// Snapshot returns the policy's id, configuration in force and injection counts. The
// counts are read one after another, without a lock: under load they may not add up to a
// single instant. It is safe for concurrent use; a registry hands out the policy
// (resilience.Lookup[*Chaos] with Layer) to read it.
func (c *Chaos) Snapshot() Snapshot {
	cfg := c.cur.Load().cfg
	return Snapshot{Instance: c.events.ID, Enabled: cfg.Enabled, Rate: cfg.Rate, Latency: cfg.Latency,
		Errors: c.counts[kindError].Load(), Results: c.counts[kindResult].Load(),
		Latencies: c.counts[kindLatency].Load(), Behaviors: c.counts[kindBehavior].Load()}
}

// count returns the count of kind k in s.
func (s Snapshot) count(k int) uint64 {
	return [numKinds]uint64{s.Errors, s.Results, s.Latencies, s.Behaviors}[k]
}
