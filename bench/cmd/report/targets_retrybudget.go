package main

import "fmt"

// The retry budget's admitted path: a call through a retry behind a budget that succeeds
// at once, so that the budget only counts it, against failsafe-go's retrypolicy with a
// budget doing the same work.
var (
	budgetOurs = subject{"resilience4go", "Wrap1 with a retry and a retry budget", "RetryBudget/resilience4go/Wrap1/admitted"}
	budgetFS   = subject{"failsafe-go", "With(retrypolicy WithBudget).Get", "RetryBudget/failsafe/Get/admitted"}
)

func init() {
	comparisons = append(comparisons,
		comparison{"A call through a retry behind a budget, admitted", budgetOurs, []subject{budgetFS}, nil})
	why["retrybudget"] = "Ours counts the call in the budget's window (a clock read and one uncontended " +
		"lock) and runs the retry's first attempt with no allocation; failsafe-go counts it with two atomic " +
		"adds but allocates its execution and closures on every call."
}

// checkRetryBudgetTargets checks, in mode m, that a call through a retry behind a budget
// that needs no retry costs at most what failsafe-go's costs for the same work, and
// allocates nothing.
func (r *results) checkRetryBudgetTargets(m mode) []verdict {
	o, p := r.figures(budgetOurs, m), r.figures(budgetFS, m)
	ratio := r.ratio(budgetOurs, budgetFS, m)
	met, short := atMost(ratio, 1)
	if o.allocs > 0 {
		met = false
		short = joinNotes(short, fmt.Sprintf("%s allocs/op instead of 0", qty(o.allocs)))
	}
	return []verdict{{
		id:     "retrybudget",
		target: "Retry behind a retry budget, admitted: no slower than failsafe-go's retrypolicy with a budget, 0 allocs",
		mode:   m.String(),
		ok:     o.ok && p.ok,
		met:    met,
		short:  short,
		margin: underMargin(ratio, 1),
		spread: spreadNote(r, at{budgetOurs, m}, at{budgetFS, m}),
		measured: fmt.Sprintf("%s ns ÷ %s ns = %s×; %s allocs/op (%s B) against %s (%s B)",
			num(o.ns), num(p.ns), ratioStr(ratio), qty(o.allocs), qty(o.bytes), qty(p.allocs), qty(p.bytes)),
	}}
}
