package bulkhead

// Snapshot is a bulkhead's state, as Bulkhead.Snapshot reads it.
type Snapshot struct {
	Instance       string // the instance id
	AvailableSlots int    // slots free now, 0..MaxConcurrent
	MaxConcurrent  int    // the configured slots, in force now
	Waiting        int    // calls queued for a slot
}

// Handle is the read-only view of a bulkhead that a registry hands out
// (resilience.Lookup[Handle] with Layer). *Bulkhead
// implements it; see its methods. It is safe for concurrent use.
type Handle interface {
	InstanceID() string  // the bulkhead's id
	AvailableSlots() int // slots free now, 0..MaxConcurrent
	Snapshot() Snapshot  // id, free and configured slots, waiting calls
}

var _ Handle = (*Bulkhead)(nil)

// InstanceID returns the bulkhead's id, which names it in its events, rejections and
// snapshots.
func (b *Bulkhead) InstanceID() string { return b.events.ID }

// Config returns the configuration in force: the one the bulkhead was built with, or the
// last one Reconfigure applied.
func (b *Bulkhead) Config() Config { return b.cur.Load().cfg }

// AvailableSlots returns how many slots are free now, from 0 to MaxConcurrent. A slot
// being handed to a waiter may show as free for an instant. After MaxConcurrent was
// lowered, it is 0 until the calls in flight are fewer than the new limit. A disabled
// bulkhead reports MaxConcurrent.
func (b *Bulkhead) AvailableSlots() int { return b.availableOf(b.cur.Load().cfg.MaxConcurrent) }

// availableOf is AvailableSlots for the limit of one configuration.
func (b *Bulkhead) availableOf(limit int) int {
	n := int64(limit)
	if !b.enabled {
		return int(n)
	}
	return int(min(max(b.free.Load(), 0), n))
}

// Waiting returns how many calls are queued for a slot now (0 on a disabled bulkhead).
func (b *Bulkhead) Waiting() int { return int(b.queued.Load()) }

// Snapshot returns the bulkhead's id, free slots, configured slots and waiting calls. The
// fields are read one after another, without a lock: under load they may not add up, but
// AvailableSlots and MaxConcurrent come from one configuration.
func (b *Bulkhead) Snapshot() Snapshot {
	limit := b.cur.Load().cfg.MaxConcurrent
	return Snapshot{Instance: b.events.ID, AvailableSlots: b.availableOf(limit),
		MaxConcurrent: limit, Waiting: b.Waiting()}
}
