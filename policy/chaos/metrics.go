package chaos

import "github.com/resilience4go/resilience4go/internal/contract"

// metricInjections is the name of a chaos policy's instrument.
const metricInjections = "resilience.chaos.injections"

// metrics is what a chaos policy measures: from its snapshot, its injections by kind,
// one series per kind (the attribute kind: error, result, latency or behavior).
var metrics = &contract.Metrics{
	Instruments: []contract.Instrument{
		{Name: metricInjections, Unit: "{injection}", Kind: contract.Counter,
			Description: "Faults a chaos policy injected into calls, by kind: error, result, latency or behavior.",
			Key:         attrKind, Values: kindNames[:],
			Read: func(state any, series int) (float64, bool) {
				s, ok := state.(Snapshot)
				return float64(s.count(series)), ok
			}},
	},
}
