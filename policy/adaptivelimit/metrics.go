package adaptivelimit

import "github.com/resilience4go/resilience4go/internal/contract"

// metrics is what an adaptive limit measures: the calls it admits and rejects, and from
// its snapshot its limit and the calls in flight and waiting.
var metrics = contract.AdmissionInstruments[Snapshot]{
	Prefix: "resilience.adaptive_limit.",
	Calls:  "Calls an adaptive limit decided on, by outcome: admitted or rejected.",
	Levels: []contract.Level[Snapshot]{
		{Name: "limit", Unit: "{call}", Description: "An adaptive limit's current limit on calls in flight.",
			Of: func(s Snapshot) int { return s.Limit }},
		{Name: "in_flight", Unit: "{call}", Description: "Calls in flight under an adaptive limit.",
			Of: func(s Snapshot) int { return s.InFlight }},
		{Name: "queued_calls", Unit: "{call}", Description: "Calls waiting for room under an adaptive limit.",
			Of: func(s Snapshot) int { return s.Queued }},
	},
}.Metrics()
