package timeout

import (
	"github.com/resilience4go/resilience4go/internal/kind"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// metricCalls is the name of a timeout's instrument, which the descriptor declares.
const metricCalls = "resilience.timeout.calls"

// metrics is what a timeout measures: its calls by outcome.
var metrics = &kind.Metrics{
	Instruments: []kind.Instrument{
		{Name: metricCalls, Unit: "{call}", Kind: kind.Counter,
			Description: "Calls through a timeout, by outcome: succeeded, failed or timed_out."},
	},
	Outcomes: &kind.Outcomes{Calls: metricCalls, Attr: "outcome", Classes: []kind.Class{
		{Value: observe.ResultSucceeded.String(), Result: observe.ResultSucceeded},
		{Value: observe.ResultFailed.String(), Result: observe.ResultFailed},
		{Value: observe.ResultTimedOut.String(), Result: observe.ResultTimedOut},
	}},
}
