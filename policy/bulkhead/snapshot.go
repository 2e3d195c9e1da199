package bulkhead

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
}

// Config returns the configuration in force: the one the bulkhead was built with, or the
// last one a registry's reload applied.
func (b *Bulkhead) Config() Config { return *b.cur.Load() }

// Snapshot returns the bulkhead's id, free slots, configured slots and waiting calls. The
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
		Waiting: b.s.Queued()}
}
