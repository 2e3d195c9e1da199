package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// key names one benchmark at one GOMAXPROCS: name without the "Benchmark" prefix and the
// "-N" suffix that go test adds when GOMAXPROCS is not 1.
type key struct {
	name  string
	procs int
}

// results holds every sample of a go test -bench output, by benchmark and unit.
type results struct {
	order   []key                        // benchmarks in order of first appearance
	samples map[key]map[string][]float64 // unit → one value per run
	units   map[key][]string             // units in order of appearance
	headers map[string]string            // goos, goarch, pkg, cpu
	procs   []int                        // the GOMAXPROCS values seen, ascending
	seen    map[int]bool
	extra   map[string]bool // units other than ns/op, B/op, allocs/op
}

// parseBench reads go test -bench output: configuration lines ("cpu: …") and result lines
// ("BenchmarkX/y-2  1000  31.2 ns/op  0 B/op  0 allocs/op").
func parseBench(r io.Reader) (*results, error) {
	res := &results{
		samples: map[key]map[string][]float64{},
		units:   map[key][]string{},
		headers: map[string]string{},
		seen:    map[int]bool{},
		extra:   map[string]bool{},
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if k, v, ok := strings.Cut(text, ": "); ok && !strings.Contains(k, " ") && !strings.HasPrefix(k, "Benchmark") {
			res.headers[k] = strings.TrimSpace(v)
			continue
		}
		if !strings.HasPrefix(text, "Benchmark") {
			continue
		}
		f := strings.Fields(text)
		if len(f) < 4 || len(f)%2 != 0 {
			continue // a benchmark's own log line, or a failure
		}
		if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
			continue
		}
		k := splitName(f[0])
		if res.samples[k] == nil {
			res.samples[k] = map[string][]float64{}
			res.order = append(res.order, k)
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: value %q: %v", line, f[i], err)
			}
			unit := f[i+1]
			if _, ok := res.samples[k][unit]; !ok {
				res.units[k] = append(res.units[k], unit)
			}
			res.samples[k][unit] = append(res.samples[k][unit], v)
			switch unit {
			case "ns/op", "B/op", "allocs/op":
			default:
				res.extra[unit] = true
			}
		}
		if !res.seen[k.procs] {
			res.seen[k.procs] = true
			res.procs = append(res.procs, k.procs)
			slices.Sort(res.procs)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(res.order) == 0 {
		return nil, fmt.Errorf("no benchmark results")
	}
	return res, nil
}

// splitName turns "BenchmarkLimiter/x/admitted-2" into {"Limiter/x/admitted", 2}.
func splitName(s string) key {
	s = strings.TrimPrefix(s, "Benchmark")
	if i := strings.LastIndexByte(s, '-'); i > 0 {
		if n, err := strconv.Atoi(s[i+1:]); err == nil && n > 0 {
			return key{s[:i], n}
		}
	}
	return key{s, 1}
}

// median returns the median of the benchmark's values in unit, and how many there were.
func (r *results) median(name string, procs int, unit string) (float64, int, bool) {
	vs := r.samples[key{name, procs}][unit]
	if len(vs) == 0 {
		return 0, 0, false
	}
	return median(vs), len(vs), true
}

func median(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// spread returns (max-min)/median of the benchmark's values in unit: how much its runs
// disagreed.
func (r *results) spread(name string, procs int, unit string) float64 {
	vs := r.samples[key{name, procs}][unit]
	if len(vs) < 2 {
		return 0
	}
	m := median(vs)
	if m == 0 {
		return 0
	}
	return (slices.Max(vs) - slices.Min(vs)) / m
}
