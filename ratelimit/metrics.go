package ratelimit

import "github.com/resilience4go/resilience4go/internal/contract"

// metrics is what a rate limiter measures: the calls it admits and rejects (per client
// key, for a keyed limiter, when the exporter is asked for keys), those that waited and
// their waits, and from its snapshot the permits available now and the calls waiting.
var metrics = contract.AdmissionInstruments[Snapshot]{
	Prefix:   "resilience.rate_limiter.",
	Calls:    "Calls a rate limiter decided on, by outcome: admitted or rejected.",
	Waited:   "Calls a rate limiter admitted after a wait for their permit.",
	Wait:     "How long the calls that waited for a rate limiter's permit waited.",
	Keyed:    true,
	Shadow:   "Calls a rate limiter in shadow mode let through that it would have rejected.",
	ShadowOf: func(s Snapshot) uint64 { return s.ShadowRejected },
	Levels: []contract.Level[Snapshot]{
		{Name: "available_permits", Unit: "{permit}",
			Description: "Permits a call could take now without waiting, per rate limiter.",
			Of:          func(s Snapshot) int { return s.AvailablePermits }},
		{Name: "waiting_calls", Unit: "{call}",
			Description: "Calls that hold a reserved permit and wait for its time, per rate limiter.",
			Of:          func(s Snapshot) int { return s.Waiting }},
	},
}.Metrics()
