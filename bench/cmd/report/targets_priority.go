package main

import "fmt"

// The admitted path of a call that carries a priority, through a limit that sheds by
// priority: our adaptive limit's Acquire and Record, and a call through our bulkhead,
// with a sheddable priority (whose share is computed from the limit), against failsafe-go's
// prioritized adaptive limiter's AcquirePermit and Record with a very low priority.
var (
	prioAL = subject{"resilience4go", "adaptive limit Acquire + Record, sheddable", "Priority/resilience4go/Acquire/adaptivelimit/sheddable"}
	prioBH = subject{"resilience4go", "bulkhead NewPolicy Decorate, sheddable", "Priority/resilience4go/NewPolicy/bulkhead/sheddable"}
	prioFS = subject{"failsafe-go", "PriorityLimiter AcquirePermit + Record, very low", "Priority/failsafe/AcquirePermit/prioritylimiter/verylow"}
)

func init() {
	comparisons = append(comparisons,
		comparison{"A call with a priority in its context, admitted by a limit that sheds by priority", prioAL, []subject{prioFS}, nil},
		comparison{"The same through a bulkhead", prioBH, []subject{prioFS}, nil})
	why["priority"] = "Both read the priority from the context and check it against what the limit " +
		"lets that priority use, then take and give back a permit. Ours is a context lookup, a " +
		"multiplication and the compare-and-swap of the admission; the adaptive limit's Record also " +
		"reads the clock and takes its sample. failsafe-go allocates the permit."
}

// checkPriorityTargets checks, in mode m, that the admitted path of a call carrying a
// priority costs at most what failsafe-go's prioritized limiter costs, with 0 B/op.
func (r *results) checkPriorityTargets(m mode) []verdict {
	var vs []verdict
	for _, s := range []subject{prioAL, prioBH} {
		o, p := r.figures(s, m), r.figures(prioFS, m)
		ratio := r.ratio(s, prioFS, m)
		met, short := atMost(ratio, 1)
		if o.bytes > 0 {
			met = false
			short = joinNotes(short, fmt.Sprintf("%s B/op instead of 0", qty(o.bytes)))
		}
		vs = append(vs, verdict{
			id:     "priority",
			target: s.label() + ": no slower than failsafe-go's prioritized limiter, 0 B/op",
			mode:   m.String(),
			ok:     o.ok && p.ok,
			met:    met,
			short:  short,
			margin: underMargin(ratio, 1),
			spread: spreadNote(r, at{s, m}, at{prioFS, m}),
			measured: fmt.Sprintf("%s ns ÷ %s ns = %s×; %s B/op against %s B/op",
				num(o.ns), num(p.ns), ratioStr(ratio), qty(o.bytes), qty(p.bytes)),
		})
	}
	return vs
}
