package bulkhead

import "github.com/resilience4go/resilience4go/internal/contract"

// The names of a bulkhead's instruments, which the descriptor declares.
const (
	metricAvailable = "resilience.bulkhead.available_slots"
	metricMax       = "resilience.bulkhead.max_slots"
	metricQueued    = "resilience.bulkhead.queued_calls"
	metricCalls     = "resilience.bulkhead.calls"
	metricWait      = "resilience.bulkhead.wait.duration"
)

// metrics is what a bulkhead measures: the calls it admits and rejects and the waits of
// those that waited, and from its snapshot its free, configured and awaited slots.
var metrics = &contract.Metrics{
	Instruments: []contract.Instrument{
		{Name: metricAvailable, Unit: "{slot}", Kind: contract.UpDown, Description: "A bulkhead's free slots.",
			Read: readSnapshot(func(s Snapshot) int { return s.AvailableSlots })},
		{Name: metricMax, Unit: "{slot}", Kind: contract.UpDown, Description: "A bulkhead's configured slots.",
			Read: readSnapshot(func(s Snapshot) int { return s.MaxConcurrent })},
		{Name: metricQueued, Unit: "{call}", Kind: contract.UpDown, Description: "Calls waiting for a bulkhead's slot.",
			Read: readSnapshot(func(s Snapshot) int { return s.Waiting })},
		{Name: metricCalls, Unit: "{call}", Kind: contract.Counter,
			Description: "Calls a bulkhead decided on, by outcome: admitted or rejected."},
		{Name: metricWait, Unit: "s", Kind: contract.Histogram,
			Description: "How long the calls that waited for a bulkhead's slot waited before they got it."},
	},
	Admissions: &contract.Admissions{Calls: metricCalls, Wait: metricWait},
}

// readSnapshot returns the Read of an instrument that reports f of a bulkhead's
// Snapshot.
func readSnapshot(f func(Snapshot) int) func(any, int) (float64, bool) {
	return func(state any, _ int) (float64, bool) {
		s, ok := state.(Snapshot)
		return float64(f(s)), ok
	}
}
