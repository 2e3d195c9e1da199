package hedge

import (
	"time"

	"github.com/resilience4go/resilience4go/internal/kind"
)

// Snapshot is a hedge's state, as Hedge.Snapshot reads it.
type Snapshot struct {
	Instance string // the instance id
	// Calls is the number of calls that arrived in the budget window, and Hedges the
	// number of hedges started in it (0 for both when the budget is off or the hedge is
	// disabled: nothing is counted).
	Calls, Hedges int
	// BudgetAvailable is how many hedges the budget would allow now, with no further
	// call: ceil(max(BudgetPercent% of Calls, BudgetMinPerSecond × BudgetWindow)) −
	// Hedges, at least 0, computed exactly from the decimals configured (2.2% of 1,500
	// calls is 33). -1 when the budget is off; 0 when the hedge is disabled.
	BudgetAvailable int
	Delay           time.Duration // the configured delay
	MaxAttempts     int           // the configured attempts per call
}

// Config returns the hedge's resolved configuration, with copies of its error lists:
// changing them changes nothing. The hedge keeps copies of the lists it was built with.
func (h *Hedge) Config() Config {
	c := h.cfg
	kind.Own(&c.HedgeOn, &c.AbortOn)
	return c
}

// Snapshot returns the hedge's id, the calls and hedges in the budget window at the
// clock's time now, the hedges the budget would allow now, and the configured delay and
// attempts. It takes the budget's lock once. It is safe for concurrent use; a registry
// hands out the hedge (resilience.Lookup[*Hedge] with Layer) to read it.
func (h *Hedge) Snapshot() Snapshot {
	s := Snapshot{Instance: h.events.ID, Delay: h.delay, MaxAttempts: h.max}
	switch {
	case !h.enabled:
	case h.budget == nil:
		s.BudgetAvailable = -1
	default:
		s.Calls, s.Hedges, s.BudgetAvailable = h.budget.state(h.clk.Now())
	}
	return s
}
