package main

import (
	"math"
	"strings"
	"testing"
)

const sample = `goos: linux
goarch: amd64
pkg: github.com/resilience4go/resilience4go/bench
cpu: AMD EPYC
BenchmarkLimiter/resilience4go/TryAcquire/admitted         	 7624634	        31.18 ns/op	       0 B/op	       0 allocs/op
BenchmarkLimiter/resilience4go/TryAcquire/admitted         	 7624634	        30.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkLimiter/resilience4go/TryAcquire/admitted         	 7624634	        35.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkLimiter/resilience4go/TryAcquire/admitted-2       	 7757466	        30.98 ns/op	       0 B/op	       0 allocs/op
BenchmarkLimiter/resilience4go/TryAcquire/admitted-2       	 7757466	        32.98 ns/op	       0 B/op	       0 allocs/op
BenchmarkWrapped/failsafe/Get/ratelimiter/admitted-2       	  316242	       988.8 ns/op	     600 B/op	      16 allocs/op	 0.001 miss/op
--- FAIL: BenchmarkBroken
PASS
ok  	github.com/resilience4go/resilience4go/bench	18.707s
`

func TestParseBench(t *testing.T) {
	r, err := parseBench(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.headers["cpu"]; got != "AMD EPYC" {
		t.Errorf("cpu header = %q", got)
	}
	if len(r.order) != 3 {
		t.Fatalf("benchmarks = %v, want 3", r.order)
	}
	if got := r.procs; len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("procs = %v, want [1 2]", got)
	}
	cases := []struct {
		name  string
		procs int
		unit  string
		want  float64
		n     int
	}{
		{"Limiter/resilience4go/TryAcquire/admitted", 1, "ns/op", 31.18, 3},
		{"Limiter/resilience4go/TryAcquire/admitted", 2, "ns/op", 31.98, 2}, // mean of the two middle values
		{"Wrapped/failsafe/Get/ratelimiter/admitted", 2, "B/op", 600, 1},
		{"Wrapped/failsafe/Get/ratelimiter/admitted", 2, "miss/op", 0.001, 1},
	}
	for _, c := range cases {
		got, n, ok := r.median(c.name, c.procs, c.unit)
		if !ok || n != c.n || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("median(%s, %d, %s) = %v, %d, %v; want %v, %d", c.name, c.procs, c.unit, got, n, ok, c.want, c.n)
		}
	}
	if !r.extra["miss/op"] {
		t.Error("miss/op not recorded as an extra unit")
	}
	if s := r.spread("Limiter/resilience4go/TryAcquire/admitted", 1, "ns/op"); s < 0.16 || s > 0.17 {
		t.Errorf("spread = %v, want (35-30)/31.18", s)
	}
}

func TestParallelName(t *testing.T) {
	if got := parallelName("Limiter/rate/Allow/admitted"); got != "LimiterParallel/rate/Allow/admitted" {
		t.Errorf("parallelName = %q", got)
	}
}

func TestTargetMargins(t *testing.T) {
	for _, c := range []struct {
		name      string
		met       bool
		short     string
		wantMet   bool
		wantShort string
	}{
		{"atMost(1.1, 1.2)", fst(atMost(1.1, 1.2)), snd(atMost(1.1, 1.2)), true, "thin margin, 8%"},
		{"atMost(0.5, 1.2)", fst(atMost(0.5, 1.2)), snd(atMost(0.5, 1.2)), true, ""},
		{"atMost(1.3, 1.2)", fst(atMost(1.3, 1.2)), snd(atMost(1.3, 1.2)), false, "8% over"},
		{"atLeast(9, 10)", fst(atLeast(9, 10)), snd(atLeast(9, 10)), false, "10% short"},
		{"atLeast(10.5, 10)", fst(atLeast(10.5, 10)), snd(atLeast(10.5, 10)), true, "thin margin, 5%"},
		{"atLeast(20, 10)", fst(atLeast(20, 10)), snd(atLeast(20, 10)), true, ""},
	} {
		if c.met != c.wantMet || c.short != c.wantShort {
			t.Errorf("%s = %v, %q; want %v, %q", c.name, c.met, c.short, c.wantMet, c.wantShort)
		}
	}
}

func fst(b bool, _ string) bool   { return b }
func snd(_ bool, s string) string { return s }

func TestLinksFrom(t *testing.T) {
	h := "see [RESULTS.md](RESULTS.md#targets)"
	if got := linksFrom("repo/bench/README.md", "repo/bench/RESULTS.md", h); got != h {
		t.Errorf("same folder: %q", got)
	}
	if got, want := linksFrom("repo/README.md", "repo/bench/RESULTS.md", h), "see [RESULTS.md](bench/RESULTS.md#targets)"; got != want {
		t.Errorf("parent folder: got %q, want %q", got, want)
	}
}

func TestRatioIsTheMedianOfTheRoundsRatios(t *testing.T) {
	res, err := parseBench(strings.NewReader(`cpu: test
BenchmarkA/ours 100 10 ns/op
BenchmarkA/peer 100 20 ns/op
BenchmarkA/ours 100 30 ns/op
BenchmarkA/peer 100 20 ns/op
BenchmarkA/ours 100 12 ns/op
BenchmarkA/peer 100 40 ns/op
`))
	if err != nil {
		t.Fatal(err)
	}
	ours, peer := subject{bench: "A/ours"}, subject{bench: "A/peer"}
	m := mode{procs: 1}
	// Rounds: 10/20 = 0.5, 30/20 = 1.5, 12/40 = 0.3; their median is 0.5, while the ratio of
	// the medians would be 12/20 = 0.6.
	if got := res.ratio(ours, peer, m); got != 0.5 {
		t.Errorf("ratio = %v, want 0.5", got)
	}
	if got := underMargin(0.5, 1); got != "50% under the limit" {
		t.Errorf("underMargin = %q", got)
	}
	if got := overMargin(2.4, 3); got != "20% short" {
		t.Errorf("overMargin = %q", got)
	}
}

func TestPeerTargetsCheckTimeAndAllocations(t *testing.T) {
	res, err := parseBench(strings.NewReader(`cpu: test
BenchmarkMiddleware/resilience4go/Middleware/rejected 100 300 ns/op 80 B/op 1 allocs/op
BenchmarkMiddleware/httprate/LimitByIP/rejected 100 1200 ns/op 900 B/op 12 allocs/op
BenchmarkKeyed/resilience4go/TryAcquire/hotkey 100 110 ns/op 0 B/op 0 allocs/op
BenchmarkKeyed/go-limiter/Take/hotkey 100 100 ns/op 0 B/op 0 allocs/op
`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]verdict{}
	for _, v := range res.checkPeerTargets(mode{procs: 1}) {
		if v.ok {
			got[v.target] = v
		}
	}
	if len(got) != 2 {
		t.Fatalf("measured targets = %d, want 2: %v", len(got), got)
	}
	for target, v := range got {
		switch {
		case strings.HasPrefix(target, "Middleware"):
			if !v.met || v.margin != "75% under the limit" {
				t.Errorf("%s: met %v, margin %q", target, v.met, v.margin)
			}
		case strings.HasPrefix(target, "Keyed"):
			if v.met || v.short != "10% over" {
				t.Errorf("%s: met %v, short %q", target, v.met, v.short)
			}
		}
	}
}

func TestWhyMissedGivesTheContendedFloor(t *testing.T) {
	res, err := parseBench(strings.NewReader(`cpu: test
BenchmarkReference/Since 100 30 ns/op
BenchmarkReferenceParallel/SinceCAS-2 100 60 ns/op
BenchmarkReferenceParallel/SinceCASWon-2 100 72 ns/op
`))
	if err != nil {
		t.Fatal(err)
	}
	r := &report{res: res, modes: []mode{{procs: 1}, {parallel: true, procs: 2}}}
	for _, id := range []string{"ref", "parallel", "wrapped-admitted"} {
		text := whyMissed(id, r)
		if !strings.Contains(text, "72.0 ns") || strings.Contains(text, "{") {
			t.Errorf("%s: the contended floor is not filled in: %q", id, text)
		}
	}
	if text := whyMissed("ref", r); !strings.Contains(text, "30.0 ns") || !strings.Contains(text, "60.0 ns") {
		t.Errorf("ref: the clock read or the reference is not filled in: %q", text)
	}

	res, err = parseBench(strings.NewReader("cpu: test\nBenchmarkReference/Since 100 30 ns/op\n"))
	if err != nil {
		t.Fatal(err)
	}
	r.res = res
	if text := whyMissed("parallel", r); !strings.Contains(text, "(not measured)") {
		t.Errorf("parallel without the floor's benchmark: %q", text)
	}
}

func TestHeadlineAndRatiosTableUseTheMediansOfTheRoundsRatios(t *testing.T) {
	res, err := parseBench(strings.NewReader(`cpu: test
BenchmarkLimiter/resilience4go/TryAcquire/admitted 100 10 ns/op 0 B/op 0 allocs/op
BenchmarkLimiter/rate/Allow/admitted 100 20 ns/op 0 B/op 0 allocs/op
BenchmarkReference/SinceCAS 100 20 ns/op
BenchmarkLimiter/resilience4go/TryAcquire/admitted 100 30 ns/op 0 B/op 0 allocs/op
BenchmarkLimiter/rate/Allow/admitted 100 20 ns/op 0 B/op 0 allocs/op
BenchmarkReference/SinceCAS 100 20 ns/op
BenchmarkLimiter/resilience4go/TryAcquire/admitted 100 12 ns/op 0 B/op 0 allocs/op
BenchmarkLimiter/rate/Allow/admitted 100 40 ns/op 0 B/op 0 allocs/op
BenchmarkReference/SinceCAS 100 40 ns/op
`))
	if err != nil {
		t.Fatal(err)
	}
	r := &report{res: res, modes: []mode{{procs: 1}, {parallel: true, procs: 2}}}
	got := r.headline()
	// Rounds: rate ÷ ours = 2, 0.67, 3.33 (median 2, where the medians give 20 ÷ 12 = 1.67);
	// ours ÷ the floor = 0.5, 1.5, 0.3 (median 0.5, where the medians give 0.6).
	for _, want := range []string{"2.00× faster than x/time/rate `Allow`", "0.50× the floor"} {
		if !strings.Contains(got, want) {
			t.Errorf("headline lacks %q:\n%s", want, got)
		}
	}
	// The Ratios table beside the medians (12 and 20, 12 and 20) says the same.
	md := r.markdown()
	for _, want := range []string{"| 12.0 | 20.0 | 2.00× faster", "| 12.0 | 20.0 | 0.50× the floor †"} {
		if !strings.Contains(md, want) {
			t.Errorf("the Ratios table lacks %q", want)
		}
	}
}

func TestWhyMissedGivesTheRedisRunsCosts(t *testing.T) {
	const name = "BenchmarkRedisCallers/resilience4go/TryAcquire/admitted/32callers"
	res, err := parseBench(strings.NewReader("cpu: test\n" +
		name + " 100 3000 ns/op 0.03125 roundtrips/op 400 script-ns/op 0.03125 scripts/op 1000 server-cpu-ns/op\n" +
		name + "-2 100 3000 ns/op 0.0625 roundtrips/op 500 script-ns/op 0.0625 scripts/op 2000 server-cpu-ns/op\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := &report{res: res, modes: []mode{{procs: 1}, {parallel: true, procs: 2}}}
	text := whyMissed("redis32", r)
	for _, want := range []string{
		"with GOMAXPROCS 1, 32.0 callers per run, and Redis spent 32.0 µs of CPU per run, 12.8 µs of it in the script",
		"with GOMAXPROCS 2, 16.0 callers per run, and Redis spent 32.0 µs of CPU per run, 8.00 µs of it in the script",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("redis32 does not say %q: %q", want, text)
		}
	}
	if !strings.Contains(text, "runs smaller than the 32 callers, so larger batches would close part of it") {
		t.Errorf("runs of 16 are not called smaller than the callers: %q", text)
	}
	if strings.Contains(text, "{") {
		t.Errorf("a placeholder is left: %q", text)
	}

	res, err = parseBench(strings.NewReader("cpu: test\n" + name + " 100 3000 ns/op 0.03125 roundtrips/op\n"))
	if err != nil {
		t.Fatal(err)
	}
	r.res = res
	if text := whyMissed("redis32", r); !strings.Contains(text, "with GOMAXPROCS 1, 32.0 callers per run: the runs are as large as 32 callers make them") {
		t.Errorf("without the server's figures: %q", text)
	}
	r.res, err = parseBench(strings.NewReader("cpu: test\nBenchmarkReference/Since 100 30 ns/op\n"))
	if err != nil {
		t.Fatal(err)
	}
	if text := whyMissed("redis32", r); !strings.Contains(text, "(not measured)") {
		t.Errorf("without the benchmark: %q", text)
	}
}
