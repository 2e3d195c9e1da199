package retrybudget

import "github.com/resilience4go/resilience4go/internal/contract"

// metrics is what a retry budget measures, from its snapshot: the calls and extra
// attempts in its window, the extra attempts it would allow now, and those it refused.
var metrics = &contract.Metrics{
	Instruments: []contract.Instrument{
		{Name: "resilience.retry_budget.window_calls", Unit: "{call}", Kind: contract.UpDown,
			Description: "Calls a retry budget saw in its window.",
			Read:        read(func(s Snapshot) (int64, bool) { return int64(s.Calls), s.Available >= 0 })},
		{Name: "resilience.retry_budget.window_extra_attempts", Unit: "{attempt}", Kind: contract.UpDown,
			Description: "Extra attempts (retries, and attempts started by hedging) a retry budget allowed in its window.",
			Read:        read(func(s Snapshot) (int64, bool) { return int64(s.ExtraAttempts), s.Available >= 0 })},
		{Name: "resilience.retry_budget.available", Unit: "{attempt}", Kind: contract.UpDown,
			Description: "Extra attempts a retry budget would allow now; no point when it is disabled.",
			Read:        read(func(s Snapshot) (int64, bool) { return int64(s.Available), s.Available >= 0 })},
		{Name: "resilience.retry_budget.refused", Unit: "{attempt}", Kind: contract.Counter,
			Description: "Extra attempts a retry budget refused.",
			Read:        read(func(s Snapshot) (int64, bool) { return s.Refused, true })},
	},
}

// read returns an instrument's Read of a budget's snapshot by of: no point when of says
// so, or for a state that is not a Snapshot.
func read(of func(Snapshot) (int64, bool)) func(state any, _ int) (float64, bool) {
	return func(state any, _ int) (float64, bool) {
		s, ok := state.(Snapshot)
		if !ok {
			return 0, false
		}
		v, has := of(s)
		return float64(v), has
	}
}
