package main

import (
	"fmt"
	"math"
	"strings"
)

// A subject is one benchmarked call: a label for people and its serial benchmark's name.
// Its parallel benchmark has "Parallel" after the top-level name (see parallelName).
type subject struct {
	lib, call, bench string
}

func (s subject) label() string { return s.lib + " " + s.call }

var (
	oursTry      = subject{"resilience4go", "TryAcquire", "Limiter/resilience4go/TryAcquire/admitted"}
	oursTryRej   = subject{"resilience4go", "TryAcquire", "Limiter/resilience4go/TryAcquire/rejected"}
	oursAcquire  = subject{"resilience4go", "Acquire(ctx)", "Limiter/resilience4go/Acquire/admitted"}
	rateAllow    = subject{"x/time/rate", "Allow", "Limiter/rate/Allow/admitted"}
	rateAllowRej = subject{"x/time/rate", "Allow", "Limiter/rate/Allow/rejected"}
	rateWait     = subject{"x/time/rate", "Wait(ctx)", "Limiter/rate/Wait/admitted"}
	uberTake     = subject{"uber ratelimit", "Take", "Limiter/uber/Take/admitted"}
	fsTry        = subject{"failsafe-go", "TryAcquirePermit", "Limiter/failsafe/TryAcquirePermit/admitted"}
	fsTryRej     = subject{"failsafe-go", "TryAcquirePermit", "Limiter/failsafe/TryAcquirePermit/rejected"}
	reference    = subject{"reference", "time.Since + CAS", "Reference/SinceCAS"}
	referenceWon = subject{"reference", "time.Since + CAS until it wins", "Reference/SinceCASWon"}
	clockRead    = subject{"reference", "time.Since", "Reference/Since"}
	oursWrapRL   = subject{"resilience4go", "Wrap1", "Wrapped/resilience4go/Wrap1/ratelimiter/admitted"}
	oursWrapRej  = subject{"resilience4go", "Wrap1", "Wrapped/resilience4go/Wrap1/ratelimiter/rejected"}
	oursFour     = subject{"resilience4go", "Wrap1", "Wrapped/resilience4go/Wrap1/four/admitted"}
	fsGetRL      = subject{"failsafe-go", "With(…).Get", "Wrapped/failsafe/Get/ratelimiter/admitted"}
	fsGetRej     = subject{"failsafe-go", "With(…).Get", "Wrapped/failsafe/Get/ratelimiter/rejected"}
	fsFour       = subject{"failsafe-go", "With(…).Get", "Wrapped/failsafe/Get/four/admitted"}
)

// A comparison sets our call against the peers' calls that do the same job.
type comparison struct {
	title string
	ours  subject
	peers []subject
	ref   *subject // the floor: a clock read and a CAS for admitted calls, a clock read for rejected ones
}

var comparisons = []comparison{
	{"A permit, admitted", oursTry, []subject{rateAllow, uberTake, fsTry}, &reference},
	{"A permit that may wait, admitted", oursAcquire, []subject{rateWait, uberTake}, &reference},
	{"A permit, rejected", oursTryRej, []subject{rateAllowRej, fsTryRej}, &clockRead},
	{"A call wrapped with a rate limiter, admitted", oursWrapRL, []subject{fsGetRL}, &reference},
	{"A call wrapped with a rate limiter, rejected", oursWrapRej, []subject{fsGetRej}, &clockRead},
	{"A call wrapped with retry, circuit breaker, rate limiter and bulkhead, admitted", oursFour, []subject{fsFour}, nil},
}

// parallelName turns "Limiter/x/y" into "LimiterParallel/x/y".
func parallelName(serial string) string {
	top, rest, _ := strings.Cut(serial, "/")
	return top + "Parallel/" + rest
}

// A mode is how a benchmark was run: serial at the lowest GOMAXPROCS of the run, or with
// RunParallel at the highest.
type mode struct {
	parallel bool
	procs    int
}

func (m mode) String() string {
	if !m.parallel {
		if m.procs == 1 {
			return "serial, 1 CPU"
		}
		return fmt.Sprintf("serial, %d CPUs", m.procs)
	}
	if m.procs == 1 {
		return "parallel, 1 goroutine"
	}
	return fmt.Sprintf("parallel, %d goroutines", m.procs)
}

func (m mode) bench(s subject) string {
	if m.parallel {
		return parallelName(s.bench)
	}
	return s.bench
}

// figures are one subject's medians in one mode.
type figures struct {
	ns, bytes, allocs float64
	ok                bool
}

func (r *results) figures(s subject, m mode) figures {
	name := m.bench(s)
	ns, _, ok := r.median(name, m.procs, "ns/op")
	b, _, _ := r.median(name, m.procs, "B/op")
	a, _, _ := r.median(name, m.procs, "allocs/op")
	return figures{ns, b, a, ok}
}

// A verdict is one target checked in one mode.
type verdict struct {
	id       string // the target, for its explanation when missed
	target   string
	mode     string
	measured string
	met      bool
	ok       bool   // false when a benchmark was missing
	short    string // when missed: by how much; when met by a thin margin: how thin
	margin   string // how far from the limit, either way: "12% under the limit", "3% over"
	spread   string // how much the runs of the benchmarks compared disagreed
}

// at is one subject in one mode: a benchmark whose runs a verdict rests on.
type at struct {
	s subject
	m mode
}

// spreadNote says how much the runs of each benchmark disagreed, (max − min) ÷ median of
// ns/op: a wide spread on one side only means the machine disturbed that side.
func spreadNote(r *results, ats ...at) string {
	parts := make([]string, 0, len(ats))
	for _, a := range ats {
		parts = append(parts, fmt.Sprintf("%s (cpu %d) %.0f%%", a.m.bench(a.s), a.m.procs, 100*r.spread(a.m.bench(a.s), a.m.procs, "ns/op")))
	}
	return "spread of the runs: " + strings.Join(parts, ", ")
}

// thin is the margin under which a met target is flagged: on a shared machine, a target
// met by less than this may be missed by the next run.
const thin = 0.10

// atMost checks got ≤ limit; atLeast got ≥ limit. When missed, the note says by how much;
// when met by a thin margin, it says how thin.
func atMost(got, limit float64) (bool, string) {
	if got <= limit {
		if m := 1 - got/limit; m < thin {
			return true, fmt.Sprintf("thin margin, %.0f%%", m*100)
		}
		return true, ""
	}
	return false, fmt.Sprintf("%.0f%% over", (got/limit-1)*100)
}

func atLeast(got, limit float64) (bool, string) {
	if got >= limit {
		if m := got/limit - 1; m < thin {
			return true, fmt.Sprintf("thin margin, %.0f%%", m*100)
		}
		return true, ""
	}
	return false, fmt.Sprintf("%.0f%% short", (1-got/limit)*100)
}

func zeroBytes(f figures) (bool, string) {
	if f.bytes == 0 && f.allocs == 0 {
		return true, ""
	}
	return false, fmt.Sprintf("%s B/op, %s allocs/op instead of 0", qty(f.bytes), qty(f.allocs))
}

// checkTargets evaluates the targets of the benchmark issue in the serial and parallel
// modes, and the accuracy target.
func checkTargets(r *results, modes []mode, acc []accuracy) []verdict {
	var vs []verdict
	add := func(id, target string, m mode, ok bool, measured string, met bool, short, margin string, ats ...at) {
		vs = append(vs, verdict{id: id, target: target, mode: m.String(), measured: measured, met: met, ok: ok, short: short,
			margin: margin, spread: spreadNote(r, ats...)})
	}
	for _, m := range modes {
		// The floor of an admitted call: a clock read and a CAS; in parallel runs, the CAS
		// retried until it wins, as an admitted call's must (a CAS that may lose is no floor).
		floor, floorName := reference, "time.Since + CAS"
		if m.parallel {
			floor, floorName = referenceWon, "time.Since + CAS until it wins"
		}
		ours, ref, allow := r.figures(oursTry, m), r.figures(floor, m), r.figures(rateAllow, m)
		rej := r.figures(oursTryRej, m)

		ratio := r.ratio(oursTry, floor, m)
		met, short := atMost(ratio, 1.2)
		add("ref", "Admitted TryAcquire within 1.2× of the reference ("+floorName+")", m, ours.ok && ref.ok,
			fmt.Sprintf("%s ns ÷ %s ns = %s×", num(ours.ns), num(ref.ns), ratioStr(ratio)), met, short, underMargin(ratio, 1.2), at{oursTry, m}, at{floor, m})

		ratio = r.ratio(rateAllow, oursTry, m)
		met, short = atLeast(ratio, 2)
		if !met && m.parallel {
			short = joinNotes(short, floorNote(r.ratio(rateAllow, floor, m), 2, "faster than rate.Limiter.Allow"))
		}
		add("allow", "Admitted TryAcquire at least 2× faster than rate.Limiter.Allow", m, ours.ok && allow.ok,
			fmt.Sprintf("%s ns ÷ %s ns = %s×", num(allow.ns), num(ours.ns), ratioStr(ratio)), met, short, overMargin(ratio, 2), at{oursTry, m}, at{rateAllow, m})

		met, short = zeroBytes(ours)
		add("alloc", "Admitted TryAcquire allocates nothing", m, ours.ok,
			fmt.Sprintf("%s B/op, %s allocs/op", qty(ours.bytes), qty(ours.allocs)), met, short, exactMargin(met))

		ratio = r.ratio(oursTryRej, oursTry, m)
		met, short = atMost(ratio, 1)
		add("rejected", "Rejected TryAcquire costs no more than an admitted one", m, ours.ok && rej.ok,
			fmt.Sprintf("%s ns against %s ns", num(rej.ns), num(ours.ns)), met, short, underMargin(ratio, 1), at{oursTryRej, m}, at{oursTry, m})

		met, short = zeroBytes(rej)
		add("alloc", "Rejected TryAcquire allocates nothing", m, rej.ok,
			fmt.Sprintf("%s B/op, %s allocs/op", qty(rej.bytes), qty(rej.allocs)), met, short, exactMargin(met))

		for _, c := range []struct {
			id, what   string
			ours, peer subject
			times      float64
			checkPeerB bool
		}{
			{"wrapped-admitted", "Wrap1 with a rate limiter, admitted: at least 10× faster than failsafe-go's executor, at 0 B/op", oursWrapRL, fsGetRL, 10, true},
			{"wrapped-rejected", "Wrap1 with a rate limiter, rejected: at least 10× faster than failsafe-go's executor, at 0 B/op", oursWrapRej, fsGetRej, 10, true},
			{"four", "Wrap1 with retry, breaker, limiter and bulkhead: at least 5× faster than failsafe-go's, at 0 B/op", oursFour, fsFour, 5, true},
		} {
			o, p := r.figures(c.ours, m), r.figures(c.peer, m)
			ratio := r.ratio(c.peer, c.ours, m)
			met, short := atLeast(ratio, c.times)
			if !met && m.parallel && c.id == "wrapped-admitted" { // an admitted call takes the TAT's line, as the floor does
				short = joinNotes(short, floorNote(r.ratio(c.peer, floor, m), c.times, "faster than failsafe-go's executor"))
			}
			if zero, zshort := zeroBytes(o); !zero {
				if met {
					short = ""
				}
				met = false
				short = strings.TrimPrefix(strings.Join([]string{short, zshort}, "; "), "; ")
			}
			add(c.id, c.what, m, o.ok && p.ok,
				fmt.Sprintf("%s ns ÷ %s ns = %s×; %s B/op against %s B/op", num(p.ns), num(o.ns), ratioStr(ratio), qty(o.bytes), qty(p.bytes)),
				met, short, overMargin(ratio, c.times), at{c.ours, m}, at{c.peer, m})
		}
		vs = append(vs, r.checkPeerTargets(m)...)
		vs = append(vs, r.checkGRPCTargets(m)...)
		vs = append(vs, r.checkHedgeTargets(m)...)
		vs = append(vs, r.checkRetryBudgetTargets(m)...)
		vs = append(vs, r.checkPriorityTargets(m)...)
		vs = append(vs, r.checkThrottleTargets(m)...)
	}
	if len(modes) == 2 && modes[1].procs > modes[0].procs {
		serial, par := modes[0], modes[1]
		for _, s := range []subject{oursTry, oursAcquire, oursWrapRL} {
			a, b := r.figures(s, serial), r.figures(s, par)
			ratio := b.ns / a.ns
			met, short := atMost(ratio, 2)
			if f, fs := r.figures(referenceWon, par), r.figures(reference, serial); !met && f.ok && fs.ok {
				short = joinNotes(short, floorNote(f.ns/fs.ns, -2, "its serial time"))
			}
			add("parallel", fmt.Sprintf("%s admitted: parallel ns/op at most 2× serial", s.label()), par, a.ok && b.ok,
				fmt.Sprintf("%s ns (%s) ÷ %s ns (%s) = %s×", num(b.ns), par, num(a.ns), serial, ratioStr(ratio)), met, short, underMargin(ratio, 2),
				at{s, par}, at{s, serial})
		}
	}
	for _, a := range acc {
		if a.Library != "resilience4go" {
			continue
		}
		met := a.Over == 0
		short := ""
		if !met {
			short = fmt.Sprintf("%d calls over", a.Over)
		}
		vs = append(vs, verdict{id: "accuracy", target: "Accuracy: zero over-admission (SPEC RL-5)",
			mode: fmt.Sprintf("%d goroutines, %v", 4, a.Elapsed.Round(1e6)), ok: true, met: met, short: short,
			margin:   fmt.Sprintf("%d under the bound", a.Bound-a.Admitted),
			measured: fmt.Sprintf("%d admitted, bound %d", a.Admitted, a.Bound)})
	}
	return vs
}

// whyMissed explains a missed target and proposes what would close it. In the texts,
// {clock} stands for the serial cost of a clock read alone in this run, {floor} for the
// reference (clock read and CAS) in the parallel mode, {won} for the same with the CAS
// retried until it wins in that mode, {procs} for that mode's goroutines, {perrun} for
// what one script run of ours with 32 callers on Redis decided and cost, in each mode.
func whyMissed(id string, r *report) string {
	text := why[id]
	subst := func(placeholder string, s subject, m mode) {
		if f := r.res.figures(s, m); f.ok {
			text = strings.ReplaceAll(text, placeholder, num(f.ns)+" ns")
		} else {
			text = strings.ReplaceAll(text, placeholder, "(not measured)")
		}
	}
	subst("{clock}", clockRead, r.modes[0])
	subst("{floor}", reference, r.modes[1])
	subst("{won}", referenceWon, r.modes[1])
	if strings.Contains(text, "{perrun}") {
		text = strings.ReplaceAll(text, "{perrun}", r.runCosts(redisOurs32, 32))
	}
	return strings.ReplaceAll(text, "{procs}", fmt.Sprint(r.modes[1].procs))
}

// runCosts says, in each mode's GOMAXPROCS, how many calls of s (callers at once) one
// script run decided (the inverse of the median of its roundtrips/op) and, when the run
// measured them, the server's CPU time and its time in the script per run (their medians
// per call, times the calls per run); then whether the runs were full.
func (r *report) runCosts(s subject, callers int) string {
	var parts []string
	full := true
	for _, m := range r.modes {
		trips, _, ok := r.res.median(s.bench, m.procs, "roundtrips/op")
		if !ok || trips <= 0 {
			continue
		}
		part := fmt.Sprintf("with GOMAXPROCS %d, %.1f callers per run", m.procs, 1/trips)
		if cpu, script, ok := r.serverPer(s, mode{procs: m.procs}); ok { // callers' benchmarks keep one name
			part += fmt.Sprintf(", and Redis spent %s µs of CPU per run, %s µs of it in the script",
				num(cpu/trips/1e3), num(script/trips/1e3))
		}
		parts = append(parts, part)
		full = full && 1/trips >= 0.95*float64(callers)
	}
	if len(parts) == 0 {
		return "(not measured)"
	}
	if full {
		return strings.Join(parts, "; ") + fmt.Sprintf(": the runs are as large as %d callers make them, so larger batches cannot close it", callers)
	}
	return strings.Join(parts, "; ") + fmt.Sprintf(": runs smaller than the %d callers, so larger batches would close part of it", callers)
}

// serverPer returns the medians of what Redis spent per call of s in mode m: its CPU time
// (server-cpu-ns/op) and its time in the script (script-ns/op), in ns; ok is false unless
// the run measured both.
func (r *report) serverPer(s subject, m mode) (cpu, script float64, ok bool) {
	cpu, _, okCPU := r.res.median(m.bench(s), m.procs, "server-cpu-ns/op")
	script, _, okScript := r.res.median(m.bench(s), m.procs, "script-ns/op")
	return cpu, script, okCPU && okScript
}

var why = map[string]string{
	"ref": "TryAcquire does what the reference does (one monotonic clock read, one load, one " +
		"compare-and-swap) and, on top of it, one check that the limiter is enabled and in-process and the GCRA arithmetic (max of TAT " +
		"and now, the tolerance test, a saturating add) in one call that the compiler does not inline " +
		"(gcraReserve is over its inlining budget). Serially that is a few nanoseconds over a clock read that " +
		"costs {clock} here, so the margin under 1.2× is thin and noise on this shared machine can take it. With " +
		"{procs} goroutines an admitted call must win its compare-and-swap, so a lost one is retried with a " +
		"fresh load (SPEC RL-13) and the shared TAT's cache line moves between the cores on every call; the " +
		"reference there retries its compare-and-swap until it wins too ({won} per call in this run, against " +
		"{floor} for one that drops a lost race): the floor of a limiter that keeps one TAT with no lock and " +
		"parks no caller (SPEC RL-1, RL-13), set by how long the machine takes to move a cache line between " +
		"its cores (a limiter behind a mutex, or one that sleeps now and then, can cost less per call in " +
		"this loop: see Where a peer is faster). Over it, ours spends its time between " +
		"the load and the compare-and-swap (the GCRA arithmetic), which widens the window in which another core " +
		"takes the line. What would close it: a shorter span between the load and the compare-and-swap; " +
		"nothing that keeps one exact TAT without a lock (SPEC RL-1, RL-5) removes the line's transfer, and spreading the " +
		"limit over per-core cells would scale but loosen the bound.",
	"allow": "x/time/rate's Allow takes a mutex, reads the wall and monotonic clocks (time.Now) and does float64 " +
		"token arithmetic; both calls share the cost of a clock read ({clock} here), which narrows the ratio. With " +
		"several goroutines, each admitted call of either takes a cache line from the other core (ours the TAT's, " +
		"Allow its mutex's), and where the machine's cores take long to hand a line over, that transfer is most of " +
		"both calls: the ratio then falls to what the floor (a clock read and a compare-and-swap retried until it " +
		"wins) reaches against Allow, which the missed line states. Serially, when ours is less than 2× faster, " +
		"compare the spread column of the medians table: the shared machine slowed one side. What would close it: " +
		"serially, the same straight-line fast path as for the reference target and a quieter machine; under " +
		"contention, nothing that keeps one exact TAT with no lock and parks no caller (SPEC RL-1, RL-5, " +
		"RL-13), as for the parallel-to-serial target.",
	"alloc": "Something on the path escapes to the heap; `go build -gcflags=-m` on the library shows what. What " +
		"would close it: keep the rejection error preallocated per limiter (SPEC RL-6) and build events only " +
		"when a listener is registered.",
	"rejected": "A rejected call reads the clock and loads the TAT like an admitted one and returns before the " +
		"compare-and-swap; it also checks for a listener. It can cost more only through noise, or if rejecting " +
		"builds or publishes something. What would close it: nothing in the design; rerun on a quiet machine and " +
		"check that the rejected path publishes nothing without a listener.",
	"wrapped-admitted": "Our wrapped call is the limiter's Acquire (one clock read, one load, one CAS), a context " +
		"check and one indirect call, a few ns over TryAcquire; failsafe-go's executor allocates 600 B in 16 " +
		"allocations per call, about 40% of the bytes for a timer it arms even when no wait is needed. Serially the " +
		"allocations cost far more than our clock read and the ratio is wide. In parallel runs every admitted " +
		"call of ours moves the one shared TAT, so each compare-and-swap pulls the cache line from the other " +
		"core, while failsafe-go's allocations come from per-core caches; the floor itself, a clock read and a " +
		"CAS on a shared word, costs {floor} with {procs} goroutines in this run ({won} when its CAS must win, as " +
		"an admitted call's must), and contended figures on a " +
		"shared machine vary widely from run to run (see the spread column). What would close it: nothing in the " +
		"composition. Under contention the cost is GCRA's single shared word with no lock (SPEC RL-1), the " +
		"price of the exact bound of RL-5 with no caller waiting for another's call; sharding the limit " +
		"across cores would scale but loosen the bound. The target is met " +
		"whenever the contended floor is under a tenth of failsafe-go's call.",
	"wrapped-rejected": "Our wrapped call is the limiter's Acquire (one clock read, one load), a context check and " +
		"one indirect call. The clock read alone costs {clock} on this machine, most of our call. failsafe-go's " +
		"executor allocates an execution, closures and policy results on every call; rejected, it arms no timer " +
		"and allocates less than admitted (352 B). So the serial rejected ratio is roughly failsafe-go's " +
		"allocations over one clock read, and sits near 10× here. In parallel runs our rejection, which writes " +
		"nothing, scales with the cores and the ratio is wider. What would close it: nothing left in the " +
		"composition (it adds a few ns over TryAcquire), and nothing within the specification for the clock: " +
		"GCRA must read it once per call (SPEC RL-12) and may not keep a background goroutine (RL-1), which rules " +
		"out a cached, coarse clock. The margin is the clock's cost against the allocator's on the machine at hand.",
	"four": "Our four-policy call reads the monotonic clock once (the rate limiter; the circuit breaker " +
		"reads none for a success without a slow-call threshold) and writes the limiter's TAT, the bulkhead's " +
		"counter and, for a success in a window of successes, nothing in the breaker. Serially the clock read " +
		"({clock} here) is most of the cost; failsafe-go pays allocations instead, so the ratio depends on how " +
		"expensive the clock is relative to the allocator. With {procs} goroutines truly in parallel, each call " +
		"writes at least two shared cache lines (the limiter's TAT, the bulkhead's counter), while failsafe-go's " +
		"allocations come from per-core caches. What would close it: nothing short of sharding the limit.",
	"parallel": "Every admitted call moves one shared int64 (GCRA's TAT): each compare-and-swap takes the cache " +
		"line exclusive, so under contention the line moves between cores on every call and lost races are " +
		"retried. A clock read and a compare-and-swap retried until it wins, with nothing else, cost {won} per " +
		"call with {procs} goroutines in this run: the floor, for a limiter that takes no lock and parks no " +
		"caller (SPEC RL-1, RL-13), set by the machine's cache-line transfer. What would close it: sharding " +
		"the limit, which would give up the exact window bound of SPEC RL-5, or a mutex, which RL-1 keeps " +
		"off the hot path (it lets one core run a streak of calls alone while the other waits, and costs " +
		"more serially); on a quieter machine the ratio is what the cache-line transfer costs.",
	"accuracy": "Admitting more than permits + floor(d/T) in a span d breaks SPEC RL-5: this is a bug in the " +
		"limiter, not a measurement effect (every admission falls within the measured span). What would close " +
		"it: a test with a manual clock that reproduces the interleaving.",
}

// floorNote says how the floor of a limiter that keeps one exact TAT with no lock and
// parks no caller, one clock read and a compare-and-swap retried until it wins, fares
// against the same limit, when ours misses it: the ratio the floor reached, "at least
// limit× what" (limit > 0) or "at most -limit× what" (limit < 0). A target that the floor
// misses too is out of reach of such a limiter on this machine: its cores take that long
// to hand the TAT's cache line to each other.
func floorNote(ratio, limit float64, what string) string {
	if math.IsNaN(ratio) || ratio <= 0 {
		return ""
	}
	if ratio >= limit && (limit > 0 || ratio <= -limit) {
		return fmt.Sprintf("the floor (time.Since + CAS until it wins) is at %s× %s, which meets it", ratioStr(ratio), what)
	}
	return fmt.Sprintf("the floor (time.Since + CAS until it wins) misses it too, at %s× %s", ratioStr(ratio), what)
}
