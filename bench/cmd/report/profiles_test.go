package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// synthetic builds a CPU profile in memory: each stack (leaf first; "a+b" is one location
// whose inlined calls are a, then b calling it) with its CPU time in ns.
type stackNs struct {
	stack []string
	ns    int64
}

func synthetic(samples ...stackNs) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10_000_000,
	}
	funcs := map[string]*profile.Function{}
	fn := func(name string) *profile.Function {
		if f, ok := funcs[name]; ok {
			return f
		}
		f := &profile.Function{ID: uint64(len(funcs) + 1), Name: name, SystemName: name}
		funcs[name] = f
		p.Function = append(p.Function, f)
		return f
	}
	for _, s := range samples {
		var locs []*profile.Location
		for _, frame := range s.stack {
			loc := &profile.Location{ID: uint64(len(p.Location) + 1)}
			for name := range strings.SplitSeq(frame, "+") {
				loc.Line = append(loc.Line, profile.Line{Function: fn(name), Line: 1})
			}
			p.Location = append(p.Location, loc)
			locs = append(locs, loc)
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{s.ns / 10_000_000, s.ns}})
	}
	return p
}

const (
	ours  = "github.com/resilience4go/resilience4go/ratelimit.(*Limiter).TryAcquire"
	bench = "github.com/resilience4go/resilience4go/bench.BenchmarkLimiter.func1"
	grpcW = "google.golang.org/grpc/internal/transport.(*loopyWriter).run"
	fsGet = "github.com/failsafe-go/failsafe-go.(*executor[...]).Get"
)

func TestCategorize(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stack []string
		want  int
	}{
		{"GC worker", []string{"runtime.scanObject", "runtime.gcDrain", "runtime.gcBgMarkWorker", "runtime.goexit"}, catGC},
		{"GC pseudo-frame", []string{"runtime._GC"}, catGC},
		{"stack growth before allocation", []string{"runtime.mallocgc", "runtime.copystack", "runtime.newstack", "runtime.morestack", ours}, catStack},
		{"allocation in our code", []string{"runtime.nextFreeFast", "runtime.mallocgc", "runtime.newobject", ours, bench}, catAlloc},
		{"allocation before hand-off", []string{"runtime.mallocgc", "runtime.newproc1", "runtime.newproc", ours}, catAlloc},
		{"scheduler", []string{"runtime.runqgrab", "runtime.findRunnable", "runtime.schedule", "runtime.park_m", "runtime.mcall"}, catSched},
		{"channel send under gRPC", []string{"runtime.futex", "runtime.futexwakeup", "runtime.wakep", "runtime.ready", "runtime.goready", "runtime.chansend", grpcW}, catSched},
		{"inlined clock read", []string{"runtime.nanotime1", "time.now+time.Since+" + ours, bench, "runtime.goexit"}, catClock},
		{"timer", []string{"runtime.(*timer).modify", "time.(*Timer).Reset", ours}, catTimers},
		{"context", []string{"sync.(*Mutex).Lock", "context.(*cancelCtx).cancel", ours}, catContext},
		{"syscall under gRPC", []string{"internal/runtime/syscall.Syscall6", "syscall.Syscall", "internal/poll.(*FD).Write", "net.(*conn).Write", grpcW}, catNet},
		{"memmove under gRPC", []string{"runtime.memmove", "golang.org/x/net/http2/hpack.(*Encoder).WriteField", grpcW}, catGRPC},
		{"protobuf", []string{"google.golang.org/protobuf/proto.MarshalOptions.marshal", grpcW}, catProto},
		{"atomic in our code", []string{"sync/atomic.(*Int64).CompareAndSwap+" + ours, bench, "testing.(*B).runN"}, catOurs},
		{"mutex in the peer", []string{"sync.(*Mutex).Lock", fsGet, bench}, catPeer},
		{"bench code", []string{"sync/atomic.(*Int64).CompareAndSwap+" + bench, "testing.(*B).RunParallel.func1", "runtime.goexit"}, catBench},
		{"unowned runtime", []string{"runtime.procyield", "", "runtime.goexit"}, catRuntime},
		{"unknown leaf, no symbol first", []string{"", "encoding/json.Marshal"}, catOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prof := synthetic(stackNs{tc.stack, 10_000_000})
			var p profiled
			p.add(prof)
			require.Empty(t, p.status)
			assert.Equal(t, categoryNames[tc.want], categoryNames[catOf(p)], "stack %v", tc.stack)
		})
	}
}

// catOf is the one category that has CPU time in p.
func catOf(p profiled) int {
	for c, v := range p.cpu {
		if v > 0 {
			return c
		}
	}
	return -1
}

// Every sample lands in one category: the categories sum to the profile's CPU time, and
// the flat times too.
func TestCategoriesSumToTheProfile(t *testing.T) {
	prof := synthetic(
		stackNs{[]string{"runtime.mallocgc", ours}, 30_000_000},
		stackNs{[]string{ours, bench}, 50_000_000},
		stackNs{[]string{"runtime.procyield"}, 20_000_000},
		stackNs{[]string{"runtime.scanObject", "runtime.gcBgMarkWorker"}, 10_000_000},
	)
	var p profiled
	p.add(prof)
	assert.InDelta(t, 110e6, p.total(), 0)
	sum := 0.0
	for _, v := range p.flat {
		sum += v
	}
	assert.InDelta(t, p.total(), sum, 0)
	assert.InDelta(t, 50e6, p.flat[ours], 0)
}

func writeProfiled(t *testing.T, dir, name, line string, prof *profile.Profile) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".txt"), []byte(line+"\n"), 0o644))
	if prof == nil {
		return
	}
	f, err := os.Create(filepath.Join(dir, name+".pprof"))
	require.NoError(t, err)
	require.NoError(t, prof.Write(f))
	require.NoError(t, f.Close())
}

// A category's figure is its CPU time over the benchmark's N, read from the profile and the
// benchmark's line as bench/profile writes them (a parallel one with its -2 suffix).
func TestNsPerCall(t *testing.T) {
	dir := t.TempDir()
	prof := synthetic(
		stackNs{[]string{"runtime.mallocgc", ours}, 20_000_000},
		stackNs{[]string{ours, bench}, 60_000_000},
	)
	writeProfiled(t, dir, "p", "BenchmarkLimiterParallel/resilience4go/TryAcquire/admitted-2 \t 1000000 \t 41.5 ns/op \t 0 B/op \t 0 allocs/op", prof)
	p := readProfiled(filepath.Join(dir, "p"))
	require.True(t, p.ok(), p.status)
	assert.InDelta(t, 1e6, p.n, 0)
	assert.InDelta(t, 41.5, p.nsOp, 0)
	assert.InDelta(t, 20.0, perCall(p.cpu[catAlloc], p.n), 1e-9) // 20 ms over 10⁶ calls
	assert.InDelta(t, 60.0, perCall(p.cpu[catOurs], p.n), 1e-9)
	assert.InDelta(t, 80.0, perCall(p.total(), p.n), 1e-9)
	assert.Zero(t, perCall(1, 0))

	assert.Equal(t, "not profiled", readProfiled(filepath.Join(dir, "none")).status)
	writeProfiled(t, dir, "noprof", "BenchmarkX 10 5 ns/op", nil)
	assert.Equal(t, "no profile", readProfiled(filepath.Join(dir, "noprof")).status)
}

// A before side the revision does not have is said so, its cells are dashes, and the
// sentence compares with the peer only; without profiles the section says how to make them.
func TestProfilesMarkdownMissingBefore(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "before"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "before", "rev.txt"), []byte("abc1234 abc1234ffff\n"), 0o644))
	writeProfiled(t, filepath.Join(dir, "before"), "hedge-ours", "# absent: no benchmark BenchmarkHedge/resilience4go/WrapAsync/hedge/go", nil)
	writeProfiled(t, filepath.Join(dir, "after"), "hedge-ours", "BenchmarkHedge/resilience4go/WrapAsync/hedge/go 1000 1500 ns/op",
		synthetic(stackNs{[]string{"runtime.mallocgc", ours}, 1_000_000}, stackNs{[]string{ours}, 500_000}))
	writeProfiled(t, filepath.Join(dir, "after"), "hedge-peer", "BenchmarkHedge/failsafe/Get/hedge 1000 2000 ns/op",
		synthetic(stackNs{[]string{"runtime.mallocgc", fsGet}, 1_500_000}, stackNs{[]string{fsGet}, 500_000}))

	rev, all := readProfiles(dir)
	require.Equal(t, "abc1234", rev)
	require.Len(t, all, len(profilePaths))
	var b strings.Builder
	writeProfiles(&b, rev, all[:1])
	md := b.String()
	assert.Contains(t, md, "## Where the time goes")
	assert.Contains(t, md, "- before (ours, at abc1234): absent: no benchmark BenchmarkHedge/resilience4go/WrapAsync/hedge/go.\n")
	assert.Contains(t, md, "| allocation | – | 1000 (67%) | 1500 (75%) |\n")
	assert.Contains(t, md, "| resilience4go | – | 500 (33%) | 0 (0%) |\n")
	assert.Contains(t, md, "| **total** CPU ns per call (benchmark ns/op) | – | **1500** (1500 ns/op, N 1000) | **2000** (2000 ns/op, N 1000) |\n")
	assert.NotContains(t, md, "| GC background work |", "a category under 1% everywhere is left out")
	assert.NotContains(t, md, "From abc1234 to now")
	assert.Contains(t, md, "Against the peer, ours takes 1500 ns of CPU per call to its 2000 ns; where they differ most: "+
		"allocation 1500 → 1000 ns, resilience4go 0 → 500 ns.")
	assert.Contains(t, md, "<details>")

	// The other paths have no files at all: each says so.
	b.Reset()
	writeProfiles(&b, rev, all[1:2])
	assert.Contains(t, b.String(), "- after (ours): not profiled.\n")

	_, none := readProfiles(t.TempDir())
	assert.Nil(t, none)
	b.Reset()
	writeProfiles(&b, "", none)
	assert.Contains(t, b.String(), "No profiles in this run. `bench/profile` writes them")
}

func TestShortFunc(t *testing.T) {
	assert.Equal(t, "ratelimit.(*Limiter).TryAcquire", shortFunc("github.com/resilience4go/resilience4go/ratelimit.(*Limiter).TryAcquire"))
	assert.Equal(t, "transport.(*loopyWriter).run", shortFunc(grpcW))
	assert.Equal(t, "internal/runtime/atomic.(*Uint32).Load", shortFunc("internal/runtime/atomic.(*Uint32).Load"))
	assert.Equal(t, "runtime.mallocgc", shortFunc("runtime.mallocgc"))
}
