package timeout

import (
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/recording"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// metricCalls is the name of a timeout's instrument, which the descriptor declares.
const metricCalls = "resilience.timeout.calls"

// metrics is what a timeout measures: its calls by outcome.
var metrics = &contract.Metrics{
	Instruments: []contract.Instrument{
		{Name: metricCalls, Unit: "{call}", Kind: contract.Counter,
			Description: "Calls through a timeout, by outcome: succeeded, failed or timed_out."},
	},
	Outcomes: &contract.Outcomes{Calls: metricCalls, Attr: "outcome", Classes: []contract.Class{
		{Value: recording.ResultName(observe.ResultSucceeded), Result: observe.ResultSucceeded},
		{Value: recording.ResultName(observe.ResultFailed), Result: observe.ResultFailed},
		{Value: recording.ResultName(observe.ResultTimedOut), Result: observe.ResultTimedOut},
	}},
}
