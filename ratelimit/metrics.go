package ratelimit

import "github.com/resilience4go/resilience4go/internal/contract"

// The names of a rate limiter's instruments, which the descriptor declares.
const (
	metricAvailable = "resilience.rate_limiter.available_permits"
	metricWaiting   = "resilience.rate_limiter.waiting_calls"
	metricCalls     = "resilience.rate_limiter.calls"
	metricWaited    = "resilience.rate_limiter.waited_calls"
	metricWait      = "resilience.rate_limiter.wait.duration"
)

// metrics is what a rate limiter measures: the calls it admits and rejects (per client
// key, for a keyed limiter, when the exporter is asked for keys), those that waited and
// their waits, and from its snapshot the permits available now and the calls waiting.
var metrics = &contract.Metrics{
	Instruments: []contract.Instrument{
		{Name: metricAvailable, Unit: "{permit}", Kind: contract.UpDown,
			Description: "Permits a call could take now without waiting, per rate limiter.",
			Read:        readSnapshot(func(s Snapshot) int { return s.AvailablePermits })},
		{Name: metricWaiting, Unit: "{call}", Kind: contract.UpDown,
			Description: "Calls that hold a reserved permit and wait for its time, per rate limiter.",
			Read:        readSnapshot(func(s Snapshot) int { return s.Waiting })},
		{Name: metricCalls, Unit: "{call}", Kind: contract.Counter,
			Description: "Calls a rate limiter decided on, by outcome: admitted or rejected."},
		{Name: metricWaited, Unit: "{call}", Kind: contract.Counter,
			Description: "Calls a rate limiter admitted after a wait for their permit."},
		{Name: metricWait, Unit: "s", Kind: contract.Histogram,
			Description: "How long the calls that waited for a rate limiter's permit waited."},
	},
	Admissions: &contract.Admissions{Calls: metricCalls, Waited: metricWaited, Wait: metricWait, Keyed: true},
}

// readSnapshot returns the Read of an instrument that reports f of a limiter's Snapshot.
func readSnapshot(f func(Snapshot) int) func(any, int) (float64, bool) {
	return func(state any, _ int) (float64, bool) {
		s, ok := state.(Snapshot)
		return float64(f(s)), ok
	}
}
