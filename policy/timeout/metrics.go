package timeout

import (
	"github.com/resilience4go/resilience4go/internal/kind"
	"github.com/resilience4go/resilience4go/policy"
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
		{Value: policy.ResultSucceeded.String(), Result: policy.ResultSucceeded},
		{Value: policy.ResultFailed.String(), Result: policy.ResultFailed},
		{Value: policy.ResultTimedOut.String(), Result: policy.ResultTimedOut},
	}},
}
