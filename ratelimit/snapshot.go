package ratelimit

// Snapshot is a limiter's state at one instant (SPEC RL-11).
type Snapshot struct {
	Instance         string // the instance id
	AvailablePermits int    // calls that would pass now without waiting, 0..Permits
	Permits          int    // the configured permits
}

// Handle is the read-only view of a limiter that a registry hands out (SPEC RG-3).
type Handle interface {
	InstanceID() string
	AvailablePermits() int
	Snapshot() Snapshot
}

var _ Handle = (*Limiter)(nil)

// InstanceID returns the limiter's id (SPEC RG-1).
func (l *Limiter) InstanceID() string { return l.id }

// Config returns the limiter's resolved configuration.
func (l *Limiter) Config() Config { return l.cfg }

// AvailablePermits returns how many calls would pass right now without waiting, from 0 to
// Permits (SPEC RL-11). A disabled limiter reports Permits.
func (l *Limiter) AvailablePermits() int {
	if !l.enabled {
		return l.cfg.Permits
	}
	if l.store != nil {
		return l.availableBackend()
	}
	return l.available(l.now())
}

func (l *Limiter) available(now int64) int {
	return gcraAvailable(l.tat.Load(), l.interval, l.tau, now, l.cfg.Permits)
}

// gcraAvailable is how many calls would pass at now without waiting, for a TAT tat.
func gcraAvailable(tat, interval, tau, now int64, permits int) int {
	ahead := tat - now // how far the TAT runs ahead of now
	if ahead <= 0 {
		return permits
	}
	slack := tau - ahead
	if slack < 0 {
		return 0
	}
	return int(min(slack/interval+1, int64(permits)))
}

// Snapshot returns the limiter's id, available permits and configured permits.
func (l *Limiter) Snapshot() Snapshot {
	return Snapshot{Instance: l.id, AvailablePermits: l.AvailablePermits(), Permits: l.cfg.Permits}
}
