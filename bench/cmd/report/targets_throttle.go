package main

import "fmt"

// The throttle's admitted path: a call wrapped with a client-side adaptive throttle in
// front of a healthy backend (every call admitted and accepted), against failsafe-go's
// adaptivethrottler doing the same work through its executor.
var (
	throttleOurs = subject{"resilience4go", "Wrap1 with a throttle", "Throttle/resilience4go/Wrap1/throttle/admitted"}
	throttleFS   = subject{"failsafe-go", "With(adaptivethrottler).Get", "Throttle/failsafe/Get/adaptivethrottler/admitted"}
)

func init() {
	comparisons = append(comparisons,
		comparison{"A call wrapped with an adaptive throttle, admitted", throttleOurs, []subject{throttleFS}, nil})
	why["throttle"] = "Both read the clock, count the call in a window of time buckets under a mutex " +
		"and compute the rejection probability; ours reads the clock once per call (the outcome counts in the " +
		"admission's bucket), admits without the mutex while the probability is 0 (an atomic word each count " +
		"updates) and allocates nothing; failsafe-go's executor allocates its execution and closures. " +
		"What would close a gap: atomic counters per bucket, so that callers on several processors do not " +
		"take turns on the mutex to count their outcomes."
}

// checkThrottleTargets checks, in mode m, that a call wrapped with a throttle and admitted
// costs at most what failsafe-go's adaptivethrottler costs for the same work, allocating
// nothing.
func (r *results) checkThrottleTargets(m mode) []verdict {
	o, p := r.figures(throttleOurs, m), r.figures(throttleFS, m)
	ratio := r.ratio(throttleOurs, throttleFS, m)
	met, short := atMost(ratio, 1)
	if zero, zshort := zeroBytes(o); !zero {
		met = false
		short = joinNotes(short, zshort)
	}
	return []verdict{{
		id:     "throttle",
		target: "Throttle, admitted: no slower than failsafe-go's adaptivethrottler, 0 B/op",
		mode:   m.String(),
		ok:     o.ok && p.ok,
		met:    met,
		short:  short,
		margin: underMargin(ratio, 1),
		spread: spreadNote(r, at{throttleOurs, m}, at{throttleFS, m}),
		measured: fmt.Sprintf("%s ns ÷ %s ns = %s×; %s B/op against %s B/op",
			num(o.ns), num(p.ns), ratioStr(ratio), qty(o.bytes), qty(p.bytes)),
	}}
}
