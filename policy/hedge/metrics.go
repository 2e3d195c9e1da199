package hedge

import (
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/recording"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// The names of a hedge's instruments, which the descriptor declares.
const (
	metricCalls    = "resilience.hedge.calls"
	metricAttempts = "resilience.hedge.attempts"
	metricBudget   = "resilience.hedge.budget_available"
)

// metrics is what a hedge measures: its calls by outcome and the attempts they started,
// and from its snapshot the hedges its budget allows now (no point when the budget is
// off).
var metrics = &contract.Metrics{
	Instruments: []contract.Instrument{
		{Name: metricCalls, Unit: "{call}", Kind: contract.Counter, Description: "Calls through a hedge, by outcome: succeeded or failed."},
		{Name: metricAttempts, Unit: "{attempt}", Kind: contract.Counter, Description: "Attempts a hedge started, first attempts included."},
		{Name: metricBudget, Unit: "{attempt}", Kind: contract.UpDown,
			Description: "Hedges a hedge's budget would allow now; no point when the budget is off.",
			Read: func(state any, _ int) (float64, bool) {
				s, ok := state.(Snapshot)
				return float64(s.BudgetAvailable), ok && s.BudgetAvailable >= 0
			}},
	},
	Outcomes: &contract.Outcomes{Calls: metricCalls, Attr: "outcome", Attempts: metricAttempts, Classes: []contract.Class{
		{Value: recording.ResultName(observe.ResultSucceeded), Result: observe.ResultSucceeded},
		{Value: recording.ResultName(observe.ResultFailed), Result: observe.ResultFailed},
	}},
}
