package bulkhead

import "github.com/resilience4go/resilience4go/internal/contract"

// metrics is what a bulkhead measures: the calls it admits and rejects and the waits of
// those that waited, and from its snapshot its free, configured and awaited slots and the
// calls it shed for their priority, by priority.
var metrics = contract.AdmissionInstruments[Snapshot]{
	Prefix:   "resilience.bulkhead.",
	Calls:    "Calls a bulkhead decided on, by outcome: admitted or rejected.",
	Wait:     "How long the calls that waited for a bulkhead's slot waited before they got it.",
	Shed:     "Calls a bulkhead shed for their priority: refused while slots remained free for higher priorities.",
	ShedOf:   func(s Snapshot) [4]int64 { return s.Shed },
	Shadow:   "Calls a bulkhead in shadow mode let through that found no slot free at once.",
	ShadowOf: func(s Snapshot) uint64 { return s.ShadowRejected },
	Levels: []contract.Level[Snapshot]{
		{Name: "available_slots", Unit: "{slot}", Description: "A bulkhead's free slots.",
			Of: func(s Snapshot) int { return s.AvailableSlots }},
		{Name: "max_slots", Unit: "{slot}", Description: "A bulkhead's configured slots.",
			Of: func(s Snapshot) int { return s.MaxConcurrent }},
		{Name: "queued_calls", Unit: "{call}", Description: "Calls waiting for a bulkhead's slot.",
			Of: func(s Snapshot) int { return s.Waiting }},
	},
}.Metrics()
