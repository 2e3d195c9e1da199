package ratelimit

import "github.com/resilience4go/resilience4go/internal/gcra"

// Snapshot is a limiter's state at one instant.
type Snapshot struct {
	Instance         string // the instance id
	AvailablePermits int    // calls that would pass now without waiting, 0..Permits
	Permits          int    // the configured permits
}

// Handle is the read-only view of a limiter that a registry hands out
// (resilience.Registry.RateLimiter).
type Handle interface {
	InstanceID() string
	AvailablePermits() int
	Snapshot() Snapshot
}

var _ Handle = (*Limiter)(nil)

// InstanceID returns the limiter's instance id, which its events and rejections carry.
func (l *Limiter) InstanceID() string { return l.events.ID }

// Config returns the limiter's resolved configuration.
func (l *Limiter) Config() Config { return l.cfg }

// AvailablePermits returns how many calls would pass right now without waiting, from 0 to
// Permits. With a backend it asks the backend's store. A disabled limiter reports
// Permits; a zero Limiter, never built, 0.
func (l *Limiter) AvailablePermits() int {
	if !l.direct {
		return l.mode().available(l)
	}
	return l.available(l.now())
}

func (l *Limiter) available(now int64) int {
	return gcraAvailable(l.tat.Load(), l.interval, l.tau, now, l.cfg.Permits)
}

// gcraAvailable is how many calls would pass at now without waiting, for a TAT tat.
func gcraAvailable(tat, interval, tau, now int64, permits int) int {
	return gcra.Available(tat-now, interval, tau, permits)
}

// Snapshot returns the limiter's id, available permits and configured permits.
func (l *Limiter) Snapshot() Snapshot {
	return Snapshot{Instance: l.events.ID, AvailablePermits: l.AvailablePermits(), Permits: l.cfg.Permits}
}
