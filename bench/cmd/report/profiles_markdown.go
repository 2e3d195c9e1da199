package main

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// topFlat is how many functions each profile's list of flat time shows.
const topFlat = 8

// writeProfiles writes the section "Where the time goes": per path, CPU ns per call by
// category before, after and for the peer, what moved most, and each profile's top
// functions. Without profiles it says how to make them.
func writeProfiles(b *strings.Builder, rev string, all []pathProfiles) {
	b.WriteString("\n## Where the time goes\n\n")
	if len(all) == 0 {
		b.WriteString("No profiles in this run. `bench/profile` writes them to `bench/out/profiles` (`bench/run` runs it " +
			"after the rounds unless `PROFILE=0`), and `go run ./cmd/report … -profiles out/profiles` adds this section: " +
			"the CPU profile of each path the speed work made faster, before it and now, set against the peer's.\n")
		return
	}
	beforeCol := "before (ours)"
	if rev != "" {
		beforeCol = fmt.Sprintf("before (ours, at %s)", rev)
	}
	fmt.Fprintf(b, "Where the CPU time of each path the speed work made faster goes: our benchmark at %s "+
		"(before the work) and now (after), and the peer's now, each run alone by `bench/profile` under `-test.cpuprofile` "+
		"for a fixed N (the N a `-benchtime` run reached). A cell is the category's CPU time per call, its samples' "+
		"CPU time divided by N (for a parallel benchmark, the calls of all its goroutines), and its share of the profile. "+
		"The profile holds the whole process (the benchmark's callers, the goroutines they start, the GC), so the CPU "+
		"per call can exceed the ns/op, and falls short of ns/op times the goroutines when the machine is busy. "+
		"Categories under 1%% in every "+
		"column are left out. Each sample is put in one category by these rules, tried in this order:\n\n",
		orNA(rev))
	for c := range numCategories {
		fmt.Fprintf(b, "%d. **%s**: %s.\n", c+1, categoryNames[c], categoryRules[c])
	}
	for _, x := range all {
		writePathProfiles(b, beforeCol, rev, x)
	}
}

func writePathProfiles(b *strings.Builder, beforeCol, rev string, x pathProfiles) {
	m := mode{parallel: x.path.parallel, procs: x.path.procs}
	fmt.Fprintf(b, "\n### %s\n\n", x.path.title)
	fmt.Fprintf(b, "Ours: %s, `%s`; peer: %s (%s), `%s`; %s.\n\n", x.path.ours.call, benchName(x.path.ours, m),
		x.path.peer.call, x.path.peer.lib, benchName(x.path.peer, m), m)
	cols := []struct {
		name string
		p    profiled
	}{{beforeCol, x.before}, {"after (ours)", x.after}, {"peer (" + x.path.peer.lib + ")", x.peer}}
	missing := false
	for _, c := range cols {
		if !c.p.ok() {
			fmt.Fprintf(b, "- %s: %s.\n", c.name, c.p.status)
			missing = true
		}
	}
	if missing {
		b.WriteString("\n")
	}
	b.WriteString("| CPU ns per call (share) |")
	for _, c := range cols {
		fmt.Fprintf(b, " %s |", c.name)
	}
	b.WriteString("\n|---|--:|--:|--:|\n")
	for cat := range numCategories {
		keep := false
		for _, c := range cols {
			if c.p.ok() && c.p.total() > 0 && c.p.cpu[cat]/c.p.total() >= 0.01 {
				keep = true
			}
		}
		if !keep {
			continue
		}
		fmt.Fprintf(b, "| %s |", categoryNames[cat])
		for _, c := range cols {
			if !c.p.ok() {
				b.WriteString(" – |")
				continue
			}
			fmt.Fprintf(b, " %s (%s) |", num(perCall(c.p.cpu[cat], c.p.n)), pct(c.p.cpu[cat], c.p.total()))
		}
		b.WriteString("\n")
	}
	b.WriteString("| **total** CPU ns per call (benchmark ns/op) |")
	for _, c := range cols {
		if !c.p.ok() {
			b.WriteString(" – |")
			continue
		}
		fmt.Fprintf(b, " **%s** (%s ns/op, N %s) |", num(perCall(c.p.total(), c.p.n)), num(c.p.nsOp), qty(c.p.n))
	}
	b.WriteString("\n\n")
	if s := whatMoved(x, rev); s != "" {
		b.WriteString(s + "\n\n")
	}
	b.WriteString("<details><summary>Top functions by flat CPU time (ns per call, share of the profile)</summary>\n\n")
	for _, c := range cols {
		if !c.p.ok() {
			continue
		}
		fmt.Fprintf(b, "%s, `%s`:\n\n| Function | ns per call | share |\n|---|--:|--:|\n", c.name, c.p.bench)
		for _, f := range topFunctions(c.p.flat, topFlat) {
			fmt.Fprintf(b, "| `%s` | %s | %s |\n", shortFunc(f.name), num(perCall(f.ns, c.p.n)), pct(f.ns, c.p.total()))
		}
		b.WriteString("\n")
	}
	b.WriteString("</details>\n")
}

// benchName is a subject's benchmark as go test prints it in mode m.
func benchName(s subject, m mode) string {
	name := "Benchmark" + m.bench(s)
	if m.procs != 1 {
		name += fmt.Sprintf("-%d", m.procs)
	}
	return name
}

// whatMoved says, from the figures, how the CPU per call changed from before to after and
// which two categories changed most, then the same against the peer.
func whatMoved(x pathProfiles, rev string) string {
	var s []string
	if x.before.ok() && x.after.ok() {
		s = append(s, fmt.Sprintf("From %s to now, CPU per call went from %s ns to %s ns (%s); what moved most: %s.",
			orNA(rev), num(perCall(x.before.total(), x.before.n)), num(perCall(x.after.total(), x.after.n)),
			change(perCall(x.before.total(), x.before.n), perCall(x.after.total(), x.after.n)), movers(x.before, x.after)))
	}
	if x.after.ok() && x.peer.ok() {
		s = append(s, fmt.Sprintf("Against the peer, ours takes %s ns of CPU per call to its %s ns; where they differ most: %s.",
			num(perCall(x.after.total(), x.after.n)), num(perCall(x.peer.total(), x.peer.n)), movers(x.peer, x.after)))
	}
	return strings.Join(s, " ")
}

// movers names the two categories whose ns per call differ most from a to b, with both
// figures ("allocation 120 → 80 ns").
func movers(a, b profiled) string {
	cats := make([]int, numCategories)
	for i := range cats {
		cats[i] = i
	}
	diff := func(c int) float64 { return math.Abs(perCall(b.cpu[c], b.n) - perCall(a.cpu[c], a.n)) }
	sort.SliceStable(cats, func(i, j int) bool { return diff(cats[i]) > diff(cats[j]) })
	var parts []string
	for _, c := range cats[:2] {
		if diff(c) == 0 {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s → %s ns", categoryNames[c], num(perCall(a.cpu[c], a.n)), num(perCall(b.cpu[c], b.n))))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// change is b against a as a signed percentage ("−35%", "+4%").
func change(a, b float64) string {
	if a == 0 {
		return "n/a"
	}
	d := (b - a) / a * 100
	if d < 0 {
		return fmt.Sprintf("−%.0f%%", -d)
	}
	return fmt.Sprintf("+%.0f%%", d)
}

func pct(part, whole float64) string {
	if whole <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", part/whole*100)
}

type fnTime struct {
	name string
	ns   float64
}

// topFunctions is the n functions with the most flat time, the most first (by name on ties).
func topFunctions(flat map[string]float64, n int) []fnTime {
	fs := make([]fnTime, 0, len(flat))
	for name, ns := range flat {
		fs = append(fs, fnTime{name, ns})
	}
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].ns != fs[j].ns {
			return fs[i].ns > fs[j].ns
		}
		return fs[i].name < fs[j].name
	})
	return fs[:min(n, len(fs))]
}

// shortFunc drops a module's function's import path up to its package's name:
// "github.com/x/y/ratelimit.(*Limiter).TryAcquire" is "ratelimit.(*Limiter).TryAcquire".
// The standard library's names stay whole ("internal/runtime/atomic.(*Uint32).Load" is not
// "sync/atomic"'s).
func shortFunc(name string) string {
	first, _, _ := strings.Cut(name, "/")
	if !strings.Contains(first, ".") {
		return name
	}
	return name[strings.LastIndex(name, "/")+1:]
}
