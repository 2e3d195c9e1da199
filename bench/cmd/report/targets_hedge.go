package main

import "fmt"

// The hedge's path: a synchronous function hedged through async.Go, its first attempt
// answering before the delay, against failsafe-go's hedgepolicy doing the same work (each
// attempt on a goroutine of its own, the caller waiting for the first answer).
var (
	hedgeGo = subject{"resilience4go", "WrapAsync with a hedge around async.Go + Await", "Hedge/resilience4go/WrapAsync/hedge/go"}
	hedgeFS = subject{"failsafe-go", "With(hedgepolicy).Get", "Hedge/failsafe/Get/hedge"}
)

func init() {
	comparisons = append(comparisons,
		comparison{"A call hedged around a goroutine, its first attempt answering", hedgeGo, []subject{hedgeFS}, nil})
	why["hedge"] = "Both start the attempt on a goroutine, arm a timer for the next attempt and wait " +
		"for the first answer; most of either call is the goroutine's start, the scheduler's hand-off and " +
		"the allocator. Ours allocates the call's state (its future held in it), the timer and its function, " +
		"the attempt's context, the context it gives async.Go for the function, the attempt's completion " +
		"callback, and async.Go's future and goroutine; failsafe-go allocates its execution, closures and " +
		"channels. What would close a gap: fewer allocations (a completion callback that is not a closure " +
		"per attempt), and keeping the work that ends the call within the attempt goroutine's first stack, " +
		"which it outgrew before: ending the call on that goroutine then copied its stack on every call."
}

// checkHedgeTargets checks, in mode m, that a call hedged around async.Go whose first
// attempt answers costs at most what failsafe-go's hedgepolicy costs for the same work,
// with no more allocations.
func (r *results) checkHedgeTargets(m mode) []verdict {
	o, p := r.figures(hedgeGo, m), r.figures(hedgeFS, m)
	ratio := r.ratio(hedgeGo, hedgeFS, m)
	met, short := atMost(ratio, 1)
	if o.allocs > p.allocs {
		met = false
		short = joinNotes(short, fmt.Sprintf("%s allocs/op instead of at most %s", qty(o.allocs), qty(p.allocs)))
	}
	return []verdict{{
		id:     "hedge",
		target: "Hedge around async.Go, first attempt answers: no slower than failsafe-go's hedgepolicy, no more allocations",
		mode:   m.String(),
		ok:     o.ok && p.ok,
		met:    met,
		short:  short,
		margin: underMargin(ratio, 1),
		spread: spreadNote(r, at{hedgeGo, m}, at{hedgeFS, m}),
		measured: fmt.Sprintf("%s ns ÷ %s ns = %s×; %s allocs/op (%s B) against %s (%s B)",
			num(o.ns), num(p.ns), ratioStr(ratio), qty(o.allocs), qty(o.bytes), qty(p.allocs), qty(p.bytes)),
	}}
}
