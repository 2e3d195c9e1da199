package main

import (
	"fmt"
	"strings"
	"testing"
)

// A peer whose call costs less than ours by aheadBy or more, in the median of the rounds'
// ratios, is listed after the Ratios table with what it does that ours does not; one
// within aheadBy is not, nor is one that ours beats.
func TestPeersAheadAreListedWithTheirReason(t *testing.T) {
	// Three rounds of ns/op: ours, uber, failsafe-go, x/time/rate.
	raw := "cpu: test\n"
	for _, round := range [][4]int{{60, 48, 59, 80}, {62, 50, 60, 80}, {64, 50, 62, 80}} {
		for k, name := range []string{"resilience4go/TryAcquire", "uber/Take", "failsafe/TryAcquirePermit", "rate/Allow"} {
			raw += fmt.Sprintf("BenchmarkLimiterParallel/%s/admitted-2 100 %d ns/op 0 B/op 0 allocs/op\n", name, round[k])
		}
	}
	got := peersAhead(t, raw)
	// Rounds: ours ÷ uber = 1.25, 1.24, 1.28 (median 1.25); ours ÷ failsafe-go = 1.02, 1.03, 1.03.
	for _, want := range []string{"### Where a peer is faster", "**uber ratelimit Take** against `TryAcquire` (parallel, 2 goroutines: ours 1.25× slower)", "it sleeps"} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	for _, absent := range []string{"failsafe-go", "x/time/rate"} {
		if strings.Contains(got, absent) {
			t.Errorf("lists %s, which is within %v× of ours or slower:\n%s", absent, aheadBy, got)
		}
	}

	// A peer ahead with no reason recorded says so; none ahead: no section.
	saved := whyAhead[uberTake.bench]
	delete(whyAhead, uberTake.bench)
	defer func() { whyAhead[uberTake.bench] = saved }()
	if got := peersAhead(t, raw); !strings.Contains(got, "No reason is recorded for this pair") {
		t.Errorf("a peer ahead without a reason:\n%s", got)
	}
	if got := peersAhead(t, "cpu: test\nBenchmarkLimiterParallel/resilience4go/TryAcquire/admitted-2 100 40 ns/op\nBenchmarkLimiterParallel/uber/Take/admitted-2 100 48 ns/op\n"); got != "" {
		t.Errorf("no peer ahead, yet:\n%s", got)
	}
}

// redis_rate ahead of ours is explained with what Redis spent per call on each side in
// this run, in each mode where both were measured.
func TestRedisRateAheadGivesTheServersCosts(t *testing.T) {
	raw := "cpu: test\n" +
		"BenchmarkRedis/resilience4go/TryAcquire/admitted 100 74000 ns/op 12400 script-ns/op 36500 server-cpu-ns/op\n" +
		"BenchmarkRedis/redis_rate/Allow/admitted 100 65000 ns/op 4900 script-ns/op 28000 server-cpu-ns/op\n" +
		"BenchmarkRedisParallel/resilience4go/TryAcquire/admitted-2 100 46000 ns/op\n" +
		"BenchmarkRedisParallel/redis_rate/Allow/admitted-2 100 36000 ns/op\n"
	got := peersAhead(t, raw)
	want := "in this run: serial, 1 CPU, 36.5 µs of CPU for ours against 28.0 µs, 12.4 µs and 4.90 µs of it in the scripts."
	if !strings.Contains(got, want) {
		t.Errorf("lacks %q:\n%s", want, got)
	}
	if strings.Contains(got, "{server}") || strings.Contains(got, "parallel, 2 goroutines, ") {
		t.Errorf("a placeholder, or a mode without the server's figures, is filled in:\n%s", got)
	}
}

// peersAhead returns the section on where a peer is faster of a report of the go test
// -bench output raw, serial and with 2 goroutines.
func peersAhead(t *testing.T, raw string) string {
	t.Helper()
	res, err := parseBench(strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	r := &report{res: res, modes: []mode{{procs: 1}, {parallel: true, procs: 2}}}
	var b strings.Builder
	r.writePeersAhead(&b)
	return b.String()
}
