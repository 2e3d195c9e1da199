package ratelimit

// Snapshot is a limiter's state at one instant.
type Snapshot struct {
	Instance         string // the instance id ("" for a limiter without a name)
	AvailablePermits int    // calls that would pass now without waiting, 0..Permits
	Permits          int    // the configured permits
	// Waiting is how many calls of this process hold a reserved permit and wait for its
	// time: blocked in Acquire or AcquireN (or a decorated call) or scheduled on the clock
	// (a decorated call that returns a future), until they start, are canceled or their
	// context ends.
	// With a backend it counts the same calls, whose permits the store reserved (or the
	// local fallback): the waits of this process, not those of other instances sharing
	// the store. A Reservation with a delay is not counted: its caller waits on its own.
	Waiting int
	// ShadowRejected counts the calls the limiter let through in shadow mode (Shadow) that
	// it would have refused, since it was built.
	ShadowRejected uint64
}

// Handle is the read-only view of a limiter that a registry hands out
// (resilience.Registry.RateLimiter): its Snapshot. resilience.Lookup gives the *Limiter
// itself.
type Handle interface {
	// Snapshot returns the limiter's state now (see Limiter.Snapshot).
	Snapshot() Snapshot
}

var _ Handle = (*Limiter)(nil)

// InstanceID returns the limiter's instance id, which its events, rejections and
// snapshots carry: its Name, the id a registry gave it, or "" for a limiter built without
// a name.
func (l *Limiter) InstanceID() string { return l.events.ID }

// Config returns the limiter's configuration in force: the one its options gave, or the
// last one Reconfigure applied.
func (l *Limiter) Config() Config { return Config(l.cur().Cfg) }

// availableAt is how many calls would pass right now without waiting, from 0 to Permits,
// at the rate r.
func (l *Limiter) availableAt(r *rate) int {
	if !r.direct {
		return r.other.available(l, r)
	}
	return l.slots.Available(l.now(), r.Interval, r.Tau, r.Cfg.Permits)
}

// Snapshot returns the limiter's id, available and configured permits, and waiting calls.
// AvailablePermits asks the backend's store, with a backend; a disabled limiter reports
// Permits, a zero Limiter, never built, 0.
func (l *Limiter) Snapshot() Snapshot {
	r := l.cur() // one configuration for both counts
	return Snapshot{Instance: l.events.ID, AvailablePermits: l.availableAt(r), Permits: r.Cfg.Permits, Waiting: int(l.waiting.Load()),
		ShadowRejected: l.shadowRejected.Load()}
}
