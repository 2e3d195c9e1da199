package circuitbreaker

import (
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// The names of a circuit breaker's instruments, which the descriptor declares.
const (
	metricState       = "resilience.circuit_breaker.state"
	metricFailureRate = "resilience.circuit_breaker.failure_rate"
	metricSlowRate    = "resilience.circuit_breaker.slow_call_rate"
	metricCalls       = "resilience.circuit_breaker.calls"
	metricSlowCalls   = "resilience.circuit_breaker.slow_calls"
	metricDuration    = "resilience.circuit_breaker.call.duration"
	metricTransitions = "resilience.circuit_breaker.transitions"
)

// metricStates are the states as the attributes state, from and to name them, by state:
// their names in snake_case.
var metricStates = snakeStateNames[:]

// metrics is what a breaker measures: its calls by outcome, the slow ones, the durations
// of those it let through and its transitions; from its snapshot, its state (one series
// per state, 1 for the current one) and its failure and slow-call rates (no point while
// it has too few calls), and the calls it let through in shadow mode that it would have
// rejected.
var metrics = &contract.Metrics{
	Instruments: []contract.Instrument{
		{Name: metricState, Unit: "1", Kind: contract.UpDown,
			Description: "A circuit breaker's state: one series per state, 1 for the current state and 0 for the others.",
			Key:         "state", Values: metricStates,
			Read: func(state any, series int) (float64, bool) {
				s, ok := state.(Snapshot)
				if st, named := stateNamed(s.State); named && int(st) == series {
					return 1, ok
				}
				return 0, ok
			}},
		{Name: metricFailureRate, Unit: "%", Kind: contract.Gauge,
			Description: "The percentage of a circuit breaker's buffered calls that failed; no point while it has fewer than its minimum number of calls.",
			Read:        readRate(func(s Snapshot) float64 { return s.FailureRate })},
		{Name: metricSlowRate, Unit: "%", Kind: contract.Gauge,
			Description: "The percentage of a circuit breaker's buffered calls that were slow; no point while it has fewer than its minimum number of calls.",
			Read:        readRate(func(s Snapshot) float64 { return s.SlowCallRate })},
		{Name: metricCalls, Unit: "{call}", Kind: contract.Counter,
			Description: "Calls through a circuit breaker, by outcome: succeeded, failed, ignored or not_permitted."},
		{Name: metricSlowCalls, Unit: "{call}", Kind: contract.Counter,
			Description: "Calls through a circuit breaker slower than its slow-call threshold, by outcome: succeeded or failed."},
		{Name: metricDuration, Unit: "s", Kind: contract.Histogram,
			Description: "How long the calls a circuit breaker let through took, by outcome: succeeded, failed or ignored."},
		{Name: metricTransitions, Unit: "{transition}", Kind: contract.Counter,
			Description: "A circuit breaker's moves from one state to another, by the states left and entered."},
		contract.ShadowInstrument("resilience.circuit_breaker.",
			"Calls a circuit breaker in shadow mode let through that it would have rejected.",
			func(s Snapshot) uint64 { return s.ShadowRejected }),
	},
	Outcomes: &contract.Outcomes{Calls: metricCalls, Attr: "outcome", Slow: metricSlowCalls, Duration: metricDuration,
		Classes: []contract.Class{
			{Value: "succeeded", Result: observe.ResultSucceeded, Slow: true, Timed: true},
			{Value: "failed", Result: observe.ResultFailed, Slow: true, Timed: true},
			{Value: "ignored", Result: observe.ResultIgnored, Timed: true},
			{Value: "not_permitted", Result: observe.ResultRejected},
		}},
	Transitions: &contract.Transitions{Counter: metricTransitions, Kind: EventTransition,
		States: metricStates, Of: transitionOf},
}

// readRate returns the Read of a rate of a breaker's Snapshot, which has no point while
// it is negative.
func readRate(f func(Snapshot) float64) func(any, int) (float64, bool) {
	return func(state any, _ int) (float64, bool) {
		s, ok := state.(Snapshot)
		r := f(s)
		return r, ok && r >= 0
	}
}

// transitionOf returns the states a transition event left and entered, as state
// indexes; false when it names a state that is not one.
func transitionOf(e policy.Event) (from, to int, ok bool) {
	f, ok1 := stateNamed(e.Attr(attrFrom).String())
	t, ok2 := stateNamed(e.Attr(attrTo).String())
	return int(f), int(t), ok1 && ok2
}

// stateNamed returns the state named name; false for another name.
func stateNamed(name string) (state, bool) {
	for s, n := range stateNames {
		if n == name {
			return state(s), true
		}
	}
	return 0, false
}
