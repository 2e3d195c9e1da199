package hedge

import (
	"time"

	"github.com/resilience4go/resilience4go/internal/contract"
)

// Snapshot is a hedge's state, and the settings it was built with, as Hedge.Snapshot
// reads them. The settings are those the options and configuration keys resolved to, each
// default given by its option; they never change, as a reload does not change a hedge.
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

	// Delay is how long the hedge waits for a result after the last attempt started
	// before it starts another (the option Delay, key hedge.delay).
	Delay time.Duration
	// MaxAttempts is the total number of attempts of one call, the first included (the
	// option MaxAttempts, key hedge.maxAttempts).
	MaxAttempts int
	// HedgeOn lists the errors that start the next attempt at once (the option On); empty:
	// every error does. AbortOn lists the errors that end the call at once (the option
	// AbortOn). Both are copies: changing them changes nothing.
	HedgeOn, AbortOn []error
	// BudgetPercent is the percentage of the calls in the budget window that the hedges
	// started in it may reach (the option BudgetPercent, key hedge.budgetPercent).
	BudgetPercent float64
	// BudgetWindow is the span over which the budget counts calls and hedges (the option
	// BudgetWindow, key hedge.budgetWindow).
	BudgetWindow time.Duration
	// BudgetMinPerSecond is the budget's floor, in hedges per second (the option
	// BudgetMinPerSecond, key hedge.budgetMinPerSecond).
	BudgetMinPerSecond float64
	// NoBudget is true when the budget is off (the option Budget(false), key
	// hedge.budgetEnabled = false): every call may start its hedges.
	NoBudget bool
	// Disabled is true when the hedge is disabled (the option Enabled(false), key
	// hedge.enabled = false): every call is a single attempt.
	Disabled bool
}

// Snapshot returns the hedge's id, the calls and hedges in the budget window at the
// clock's time now, the hedges the budget would allow now, and the hedge's settings, with
// copies of its error lists (it allocates them when they are not empty). It takes the
// budget's lock once. It is safe for concurrent use; a registry hands out the hedge
// (resilience.Lookup[*Hedge] with Layer) to read it.
func (h *Hedge) Snapshot() Snapshot {
	c := h.cfg
	contract.Own(&c.HedgeOn, &c.AbortOn)
	s := Snapshot{Instance: h.events.ID, Delay: h.delay, MaxAttempts: h.max,
		HedgeOn: c.HedgeOn, AbortOn: c.AbortOn, BudgetPercent: c.BudgetPercent,
		BudgetWindow: c.BudgetWindow, BudgetMinPerSecond: c.BudgetMinPerSecond,
		NoBudget: c.NoBudget, Disabled: c.Disabled}
	switch {
	case !h.enabled:
	case h.budget == nil:
		s.BudgetAvailable = -1
	default:
		s.Calls, s.Hedges, s.BudgetAvailable = h.budget.state(h.clk.Now())
	}
	return s
}
