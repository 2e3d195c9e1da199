package bulkhead

import "github.com/resilience4go/resilience4go/policy"

// Snapshot is a bulkhead's state, as Bulkhead.Snapshot reads it.
type Snapshot struct {
	Instance string // the instance id
	// AvailableSlots is how many slots are free now, from 0 to MaxConcurrent. A slot
	// being handed to a waiter may show as free for an instant. After MaxConcurrent was
	// lowered, it is 0 until the calls in flight are fewer than the new limit. A disabled
	// bulkhead reports MaxConcurrent.
	AvailableSlots int
	MaxConcurrent  int // the configured slots, in force now
	Waiting        int // calls queued for a slot (0 on a disabled bulkhead)
	// Shed counts the calls shed for their priority since the bulkhead was built, by
	// priority (Shed[policy.PrioritySheddable] for the sheddable ones): refused for want
	// of a slot while slots remained free for higher priorities (see
	// Config.PriorityReserve). The calls rejected with every slot taken are not in it.
	Shed [policy.PriorityCriticalPlus + 1]int64
	// ShadowRejected counts the calls the bulkhead let through in shadow mode (Shadow)
	// that found no slot free at once, since it was built.
	ShadowRejected uint64
}

// Config returns the configuration in force: the one the bulkhead was built with, or the
// last one a registry's reload applied.
func (b *Bulkhead) Config() Config { return *b.cur.Load() }

// Snapshot returns the bulkhead's id, free slots, configured slots, waiting calls and
// the calls shed for their priority. The
// fields are read one after another, without a lock: under load they may not add up, but
// AvailableSlots and MaxConcurrent come from one configuration. It is safe for concurrent
// use; a registry hands out the bulkhead (resilience.Lookup[*Bulkhead] with Layer) to
// read it.
func (b *Bulkhead) Snapshot() Snapshot {
	limit := b.s.Limit()
	free := limit
	if b.s.Enabled() {
		free = min(max(limit-b.s.InFlight(), 0), limit)
	}
	return Snapshot{Instance: b.events.ID, AvailableSlots: free, MaxConcurrent: limit,
		Waiting: b.s.Queued(), Shed: b.s.Shed(), ShadowRejected: b.s.ShadowRejected()}
}
