package retrybudget

import "math"

// Snapshot is a retry budget's state, as Budget.Snapshot reads it.
type Snapshot struct {
	Instance string // the instance id
	// Calls is the number of calls the budget saw in the window, and ExtraAttempts the
	// number of extra attempts (retries and hedges) it allowed in it, less those given
	// back (0 for both when the budget is disabled).
	Calls, ExtraAttempts int
	// Available is how many extra attempts the budget would allow now, with no further
	// call: max(⌈Ratio × Calls⌉, ⌈MinPerSecond × Window⌉) − ExtraAttempts, at least 0.
	// -1 when the budget is disabled.
	Available int
	// Refused is the number of extra attempts the budget refused since it was built.
	Refused int64
}

// Config returns the configuration in force: the one the budget was built with, or the
// last one a registry's reload applied.
func (b *Budget) Config() Config { return *b.cur.Load() }

// Snapshot returns the budget's id, the calls and extra attempts in the window at the
// clock's time now, the extra attempts it would allow now and those it refused so far,
// under the budget's lock once. It is safe for concurrent use; a registry hands out the
// budget (resilience.Lookup[*Budget] with Layer) to read it.
func (b *Budget) Snapshot() Snapshot {
	s := Snapshot{Instance: b.events.ID, Refused: b.refused.Load(), Available: -1}
	if b.cur.Load().Disabled {
		return s
	}
	now := b.clk.Now()
	b.mu.Lock()
	calls, extras := b.w.Sum(now, callsCounter), b.w.Sum(now, extrasCounter)
	allowance := max(clampInt64(b.ratio.CeilMul(uint64(max(calls, 0)))), b.floor)
	b.mu.Unlock()
	s.Calls, s.ExtraAttempts = int(calls), int(extras)
	s.Available = int(min(max(allowance-extras, 0), math.MaxInt))
	return s
}
