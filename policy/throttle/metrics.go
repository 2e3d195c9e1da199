package throttle

import "github.com/resilience4go/resilience4go/internal/contract"

// metrics is what a throttle measures: the calls it admits and rejects, and from its
// snapshot the requests and accepts of its window and its rejection probability.
var metrics = func() *contract.Metrics {
	m := contract.AdmissionInstruments[Snapshot]{
		Prefix: "resilience.throttle.",
		Calls:  "Calls a throttle decided on, by outcome: admitted or rejected.",
		Levels: []contract.Level[Snapshot]{
			{Name: "window.requests", Unit: "{call}", Description: "The calls attempted in a throttle's window, rejected ones included.",
				Of: func(s Snapshot) int { return s.Requests }},
			{Name: "window.accepts", Unit: "{call}", Description: "The calls the backend accepted in a throttle's window.",
				Of: func(s Snapshot) int { return s.Accepts }},
		},
	}.Metrics()
	m.Instruments = append(m.Instruments, contract.Instrument{Name: "resilience.throttle.rejection_probability",
		Unit: "1", Kind: contract.Gauge, Description: "The probability with which a throttle rejects a call now.",
		Read: func(state any, _ int) (float64, bool) {
			s, ok := state.(Snapshot)
			return s.Probability, ok
		}})
	return m
}()
