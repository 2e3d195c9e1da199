package retry

import (
	"github.com/resilience4go/resilience4go/internal/kind"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// The names of a retry's instruments, which the descriptor declares.
const (
	metricCalls    = "resilience.retry.calls"
	metricAttempts = "resilience.retry.attempts"
)

// metrics is what a retry measures: its calls by kind (whether they succeeded, and
// whether they were retried) and the attempts they made.
var metrics = &kind.Metrics{
	Instruments: []kind.Instrument{
		{Name: metricCalls, Unit: "{call}", Kind: kind.Counter,
			Description: "Calls through a retry, by kind: succeeded_without_retry, succeeded_with_retry, failed_without_retry, failed_with_retry or aborted."},
		{Name: metricAttempts, Unit: "{attempt}", Kind: kind.Counter, Description: "Attempts a retry made, first attempts included."},
	},
	Outcomes: &kind.Outcomes{Calls: metricCalls, Attr: "kind", Attempts: metricAttempts, Classes: []kind.Class{
		{Value: "succeeded_without_retry", Result: observe.ResultSucceeded, Retried: kind.FirstAttempt},
		{Value: "succeeded_with_retry", Result: observe.ResultSucceeded, Retried: kind.Retries},
		{Value: "failed_without_retry", Result: observe.ResultFailed, Retried: kind.FirstAttempt},
		{Value: "failed_with_retry", Result: observe.ResultFailed, Retried: kind.Retries},
		{Value: "aborted", Result: observe.ResultAborted},
	}},
}
