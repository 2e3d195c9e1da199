package adaptivelimit

import (
	"time"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
)

// Snapshot is an adaptive limiter's state, as Limiter.Snapshot reads it.
type Snapshot struct {
	Instance  string // the instance id
	Algorithm string // the algorithm that moves the limit: AIMD, Gradient2 or Vegas
	Limit     int    // the limit on calls in flight now, MinLimit..MaxLimit
	InFlight  int    // calls in flight now; above Limit, after it went down, until enough complete
	Queued    int    // calls waiting for room
	// Latency is the average latency of the calls of the last round; 0 before the first
	// round ends.
	Latency time.Duration
	// Baseline is the latency Gradient2 and Vegas compare the rounds with: the smallest
	// round average of the recent rounds (see BaselineWindow); 0 for AIMD, and before the
	// first round ends.
	Baseline time.Duration
	MinLimit int // the configured lowest limit
	MaxLimit int // the configured highest limit
	// Shed counts the calls shed for their priority since the limiter was built, by
	// priority (Shed[policy.PrioritySheddable] for the sheddable ones): refused for want
	// of room while room remained under the limit for higher priorities (see
	// Config.PriorityReserve). The calls rejected with the limit reached are not in it.
	Shed [policy.PriorityCriticalPlus + 1]int64
	// ShadowRejected counts the calls the limiter let through in shadow mode (Shadow)
	// that found no room at once, since it was built.
	ShadowRejected uint64
}

// Config returns the limiter's resolved configuration, with copies of its error lists:
// changing them changes nothing. The limiter keeps copies of the lists it was built with.
func (l *Limiter) Config() Config {
	c := l.cfg
	c.Shadow = l.s.Shadow()
	contract.Own(&c.DropOn, &c.IgnoreOn)
	return c
}

// Snapshot returns the limiter's id, algorithm, limit, calls in flight and waiting, the
// latencies of its algorithm, and the calls shed for their priority. The counters are read one after another, without a
// lock: under load they may not add up. A disabled limiter reports its InitialLimit, and
// no call in flight or waiting. It allocates nothing.
func (l *Limiter) Snapshot() Snapshot {
	return Snapshot{Instance: l.events.ID, Algorithm: l.cfg.Algorithm, Limit: l.s.Limit(),
		InFlight: l.s.InFlight(), Queued: l.s.Queued(),
		Latency: time.Duration(l.latency.Load()), Baseline: time.Duration(l.baseline.Load()),
		MinLimit: l.cfg.MinLimit, MaxLimit: l.cfg.MaxLimit, Shed: l.s.Shed(),
		ShadowRejected: l.s.ShadowRejected()}
}
