package retry

import (
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// The names of a retry's instruments, which the descriptor declares.
const (
	metricCalls    = "resilience.retry.calls"
	metricAttempts = "resilience.retry.attempts"
)

// metrics is what a retry measures: its calls by kind (whether they succeeded, and
// whether they were retried) and the attempts they made.
var metrics = &contract.Metrics{
	Instruments: []contract.Instrument{
		{Name: metricCalls, Unit: "{call}", Kind: contract.Counter,
			Description: "Calls through a retry, by kind: succeeded_without_retry, succeeded_with_retry, failed_without_retry, failed_with_retry or aborted."},
		{Name: metricAttempts, Unit: "{attempt}", Kind: contract.Counter, Description: "Attempts a retry made, first attempts included."},
	},
	Outcomes: &contract.Outcomes{Calls: metricCalls, Attr: "kind", Attempts: metricAttempts, Classes: []contract.Class{
		{Value: "succeeded_without_retry", Result: observe.ResultSucceeded, Retried: contract.FirstAttempt},
		{Value: "succeeded_with_retry", Result: observe.ResultSucceeded, Retried: contract.Retries},
		{Value: "failed_without_retry", Result: observe.ResultFailed, Retried: contract.FirstAttempt},
		{Value: "failed_with_retry", Result: observe.ResultFailed, Retried: contract.Retries},
		{Value: "aborted", Result: observe.ResultAborted},
	}},
}
