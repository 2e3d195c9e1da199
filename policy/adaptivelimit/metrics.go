package adaptivelimit

import "github.com/resilience4go/resilience4go/internal/contract"

// metrics is what an adaptive limit measures: the calls it admits and rejects, and from
// its snapshot its limit, the calls in flight and waiting, and the calls it shed for
// their priority, by priority.
var metrics = contract.AdmissionInstruments[Snapshot]{
	Prefix:   "resilience.adaptive_limit.",
	Calls:    "Calls an adaptive limit decided on, by outcome: admitted or rejected.",
	Shed:     "Calls an adaptive limit shed for their priority: refused while room remained under the limit for higher priorities.",
	ShedOf:   func(s Snapshot) [4]int64 { return s.Shed },
	Shadow:   "Calls an adaptive limit in shadow mode let through that found no room at once.",
	ShadowOf: func(s Snapshot) uint64 { return s.ShadowRejected },
	Levels: []contract.Level[Snapshot]{
		{Name: "limit", Unit: "{call}", Description: "An adaptive limit's current limit on calls in flight.",
			Of: func(s Snapshot) int { return s.Limit }},
		{Name: "in_flight", Unit: "{call}", Description: "Calls in flight under an adaptive limit.",
			Of: func(s Snapshot) int { return s.InFlight }},
		{Name: "queued_calls", Unit: "{call}", Description: "Calls waiting for room under an adaptive limit.",
			Of: func(s Snapshot) int { return s.Queued }},
	},
}.Metrics()
