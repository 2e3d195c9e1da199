package adaptivelimit

import (
	"time"

	"github.com/resilience4go/resilience4go/internal/kind"
)

// Snapshot is an adaptive limiter's state, as Limiter.Snapshot reads it.
type Snapshot struct {
	Instance  string    // the instance id
	Algorithm Algorithm // the algorithm that moves the limit
	Limit     int       // the limit on calls in flight now, MinLimit..MaxLimit
	InFlight  int       // calls in flight now
	Queued    int       // calls waiting for room
	// Latency is the average latency of the calls of the last round; 0 before the first
	// round ends.
	Latency time.Duration
	// Baseline is the latency Gradient2 and Vegas compare the rounds with: the smallest
	// round average of the recent rounds (see BaselineWindow); 0 for AIMD, and before the
	// first round ends.
	Baseline time.Duration
	MinLimit int // the configured lowest limit
	MaxLimit int // the configured highest limit
}

// Handle is the read-only view of an adaptive limiter that a registry hands out
// (resilience.Lookup[Handle] with Layer).
// *Limiter implements it; see its methods. It is safe for concurrent use.
type Handle interface {
	InstanceID() string // the limiter's id
	Limit() int         // the limit on calls in flight now
	InFlight() int      // calls in flight now
	Queued() int        // calls waiting for room now
	Snapshot() Snapshot // id, algorithm, limit, calls in flight and waiting, latencies
}

var _ Handle = (*Limiter)(nil)

// InstanceID returns the limiter's id, which names it in its events, rejections and
// snapshots.
func (l *Limiter) InstanceID() string { return l.events.ID }

// Config returns the limiter's resolved configuration, with copies of its error lists:
// changing them changes nothing. The limiter keeps copies of the lists it was built with.
func (l *Limiter) Config() Config {
	c := l.cfg
	kind.Own(&c.DropOn, &c.IgnoreOn)
	return c
}

// Limit returns the limit on calls in flight now, from MinLimit to MaxLimit. A disabled
// limiter reports InitialLimit.
func (l *Limiter) Limit() int { return int(l.limit.Load()) }

// InFlight returns how many calls are in flight now (0 on a disabled limiter). After the
// limit went down it may be above Limit until enough calls complete.
func (l *Limiter) InFlight() int { return int(uint32(l.word.Load())) }

// Queued returns how many calls wait for room now (0 on a disabled limiter).
func (l *Limiter) Queued() int { return int(l.queued.Load()) }

// Snapshot returns the limiter's id, algorithm, limit, calls in flight and waiting, and
// the latencies of its algorithm. The counters are read one after another, without a
// lock: under load they may not add up.
func (l *Limiter) Snapshot() Snapshot {
	return Snapshot{Instance: l.events.ID, Algorithm: l.cfg.Algorithm, Limit: l.Limit(),
		InFlight: l.InFlight(), Queued: l.Queued(),
		Latency: time.Duration(l.latency.Load()), Baseline: time.Duration(l.baseline.Load()),
		MinLimit: l.cfg.MinLimit, MaxLimit: l.cfg.MaxLimit}
}
