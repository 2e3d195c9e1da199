package adaptivelimit

import "github.com/resilience4go/resilience4go/internal/contract"

// The names of an adaptive limit's instruments, which the descriptor declares.
const (
	metricLimit    = "resilience.adaptive_limit.limit"
	metricInFlight = "resilience.adaptive_limit.in_flight"
	metricQueued   = "resilience.adaptive_limit.queued_calls"
	metricCalls    = "resilience.adaptive_limit.calls"
)

// metrics is what an adaptive limit measures: the calls it admits and rejects, and from
// its snapshot its limit and the calls in flight and waiting.
var metrics = &contract.Metrics{
	Instruments: []contract.Instrument{
		{Name: metricLimit, Unit: "{call}", Kind: contract.UpDown, Description: "An adaptive limit's current limit on calls in flight.",
			Read: readSnapshot(func(s Snapshot) int { return s.Limit })},
		{Name: metricInFlight, Unit: "{call}", Kind: contract.UpDown, Description: "Calls in flight under an adaptive limit.",
			Read: readSnapshot(func(s Snapshot) int { return s.InFlight })},
		{Name: metricQueued, Unit: "{call}", Kind: contract.UpDown, Description: "Calls waiting for room under an adaptive limit.",
			Read: readSnapshot(func(s Snapshot) int { return s.Queued })},
		{Name: metricCalls, Unit: "{call}", Kind: contract.Counter,
			Description: "Calls an adaptive limit decided on, by outcome: admitted or rejected."},
	},
	Admissions: &contract.Admissions{Calls: metricCalls},
}

// readSnapshot returns the Read of an instrument that reports f of a limiter's Snapshot.
func readSnapshot(f func(Snapshot) int) func(any, int) (float64, bool) {
	return func(state any, _ int) (float64, bool) {
		s, ok := state.(Snapshot)
		return float64(f(s)), ok
	}
}
