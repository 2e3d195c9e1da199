package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// The profiles that bench/profile writes: for each path the speed work made faster, the CPU
// profile of our benchmark now ("after") and at the revision the work started from
// ("before"), and of the peer's now, each with the benchmark's output line. Every sample
// of a profile is put in one category (categorize), and each category is shown as CPU ns
// per call: its samples' CPU time divided by the benchmark's N in that run (for a
// RunParallel benchmark, N is the calls of all its goroutines together).

// A profilePath is one path, with its benchmarks: ours and the peer's, serial at one CPU
// or RunParallel at procs.
type profilePath struct {
	id, title  string
	ours, peer subject
	parallel   bool
	procs      int
}

var profilePaths = []profilePath{
	{"hedge", "A call hedged around async.Go, its first attempt answering", hedgeGo, hedgeFS, false, 1},
	{"wrapasync", "WrapAsync with a rate limiter around async.Go + Await, serial", asyncWrap, asyncChanRL, false, 1},
	{"wrapasync-parallel", "WrapAsync with a rate limiter around async.Go + Await, 2 goroutines", asyncWrap, asyncChanRL, true, 2},
	{"grpc-refused", "gRPC server, 32 callers, nearly every call refused", grpcLoadOurs, grpcLoadPeer, false, 1},
	{"tryacquire-contended", "Admitted TryAcquire, 2 goroutines on one limiter", oursTry, referenceWon, true, 2},
}

// The categories, in the order the rules are tried. The first four look for a frame
// anywhere in the sample's stack: the runtime's mechanisms, whoever set them off. The next
// ones own frames: the stack is walked from its leaf towards its root, and the first frame
// that one of them owns decides (so a syscall made by gRPC is a network syscall, a
// runtime.memmove called by gRPC is gRPC's, a sync.Mutex taken by a peer is the peer's).
// A stack no rule claims is "other runtime" when its leaf is in the runtime, else "other":
// every sample lands in exactly one category, so they sum to 100%.
const (
	catGC = iota
	catStack
	catAlloc
	catSched
	catClock
	catTimers
	catContext
	catNet
	catGRPC
	catProto
	catOurs
	catPeer
	catBench
	catRuntime
	catOther
	numCategories
)

var categoryNames = [numCategories]string{
	"GC background work", "stack growth", "allocation", "scheduler and goroutine hand-off",
	"clock reads", "timers", "context package", "network syscalls", "gRPC and HTTP/2", "protobuf",
	"resilience4go", "peer libraries", "benchmark code", "other runtime", "other",
}

var categoryRules = [numCategories]string{
	"`runtime.gcBgMarkWorker`, `runtime.bgsweep` or `runtime.bgscavenge` anywhere in the stack, or the runtime's `runtime._GC` pseudo-frame",
	"`runtime.newstack` or `runtime.copystack` anywhere: a goroutine outgrowing its stack",
	"`runtime.mallocgc` anywhere, with the GC assists it makes",
	"anywhere: the scheduler's loop (`runtime.schedule`), parking and readying goroutines, starting and ending them, waking and parking threads, runtime locks, semaphores, channel operations and `select`",
	"the first owned frame reads the clock: `time.Now`, `time.Since`, `time.now`, `runtime.nanotime`, `runtime.walltime`",
	"the first owned frame is a timer's: `time.AfterFunc`, `time.NewTimer`, `(*time.Timer).Stop`/`Reset`, the runtime's `(*timer)` methods",
	"the first owned frame is in package `context`",
	"the first owned frame is in `syscall`, `internal/poll`, `net`, `golang.org/x/sys/unix` or the runtime's network poller",
	"the first owned frame is in `google.golang.org/grpc` or `golang.org/x/net/http2` (HPACK included)",
	"the first owned frame is in `google.golang.org/protobuf` or `google.golang.org/genproto`",
	"the first owned frame is resilience4go's (the module, not its bench package)",
	"the first owned frame is in failsafe-go, go-grpc-middleware or `golang.org/x/time`",
	"the first owned frame is the bench package's or `testing`'s: the benchmark's loop, and the whole of the reference and of the goroutine-and-channel peer",
	"no frame owned, the leaf in the runtime",
	"no frame owned, the leaf elsewhere",
}

// schedFuncs are the runtime functions whose presence anywhere in a stack makes it
// scheduler and goroutine hand-off. runtime.goexit and runtime.mstart, at the root of
// every goroutine's and thread's stack, are not among them.
var schedFuncs = setOf(
	"runtime.schedule", "runtime.findRunnable", "runtime.park_m", "runtime.gopark", "runtime.goparkunlock",
	"runtime.goready", "runtime.ready", "runtime.newproc", "runtime.newproc1", "runtime.goexit0", "runtime.goexit1",
	"runtime.gosched_m", "runtime.goschedImpl", "runtime.wakep", "runtime.startm", "runtime.stopm", "runtime.mPark",
	"runtime.handoffp", "runtime.notesleep", "runtime.notewakeup", "runtime.futexsleep", "runtime.futexwakeup",
	"runtime.futex", "runtime.lock2", "runtime.unlock2", "runtime.semacquire1", "runtime.semrelease1",
	"runtime.chansend", "runtime.chanrecv", "runtime.selectgo", "runtime.closechan", "runtime.usleep", "runtime.osyield",
)

var clockFuncs = setOf("time.Now", "time.Since", "time.Until", "time.now", "time.runtimeNano", "runtime.nanotime",
	"runtime.nanotime1", "runtime.walltime", "runtime.walltime1")

// owners are the prefixes of the function names each owning category claims, tried in
// this order on each frame.
var owners = []struct {
	cat      int
	prefixes []string
}{
	{catTimers, []string{"time.AfterFunc", "time.NewTimer", "time.newTimer", "time.(*Timer).", "runtime.(*timer).", "runtime.(*timers).", "time.stopTimer", "time.resetTimer"}},
	{catContext, []string{"context."}},
	{catNet, []string{"syscall.", "internal/poll.", "net.", "golang.org/x/sys/unix.", "internal/runtime/syscall.", "runtime.netpoll"}},
	{catGRPC, []string{"google.golang.org/grpc", "golang.org/x/net/http2"}},
	{catProto, []string{"google.golang.org/protobuf/", "google.golang.org/genproto/", "github.com/golang/protobuf/"}},
	{catBench, []string{"github.com/resilience4go/resilience4go/bench.", "testing."}},
	{catOurs, []string{"github.com/resilience4go/resilience4go/"}},
	{catPeer, []string{"github.com/failsafe-go/", "github.com/grpc-ecosystem/", "golang.org/x/time/"}},
}

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// frames lists a sample's function names from its leaf to its root, inlined calls
// included ("" for a frame with no symbol).
func frames(s *profile.Sample) []string {
	var names []string
	for _, loc := range s.Location {
		if len(loc.Line) == 0 {
			names = append(names, "")
		}
		for _, l := range loc.Line {
			name := ""
			if l.Function != nil {
				name = l.Function.Name
			}
			names = append(names, name)
		}
	}
	return names
}

// categorize puts a stack (leaf first) in its category.
func categorize(stack []string) int {
	has := func(match func(string) bool) bool {
		for _, f := range stack {
			if match(f) {
				return true
			}
		}
		return false
	}
	switch {
	case has(func(f string) bool {
		return f == "runtime.gcBgMarkWorker" || f == "runtime.bgsweep" || f == "runtime.bgscavenge" || f == "runtime._GC"
	}):
		return catGC
	case has(func(f string) bool { return f == "runtime.newstack" || f == "runtime.copystack" }):
		return catStack
	case has(func(f string) bool { return f == "runtime.mallocgc" }):
		return catAlloc
	case has(func(f string) bool { return schedFuncs[f] }):
		return catSched
	}
	for _, f := range stack {
		if clockFuncs[f] {
			return catClock
		}
		for _, o := range owners {
			for _, p := range o.prefixes {
				if strings.HasPrefix(f, p) {
					return o.cat
				}
			}
		}
	}
	for _, f := range stack {
		if f == "" {
			continue
		}
		if strings.HasPrefix(f, "runtime.") || strings.HasPrefix(f, "runtime/") || strings.HasPrefix(f, "internal/runtime/") {
			return catRuntime
		}
		return catOther
	}
	return catOther
}

// A profiled is one benchmark's profile: its output line's figures and its CPU time by
// category and by leaf function. status says why there are none ("" when there are).
type profiled struct {
	status string
	bench  string
	n      float64 // the benchmark's N in the profiled run
	nsOp   float64
	cpu    [numCategories]float64 // ns, all of the profile
	flat   map[string]float64     // ns by leaf function
}

func (p profiled) ok() bool { return p.status == "" }

func (p profiled) total() float64 {
	t := 0.0
	for _, v := range p.cpu {
		t += v
	}
	return t
}

// perCall is CPU ns per call: ns of CPU over the benchmark's N.
func perCall(ns, n float64) float64 {
	if n <= 0 {
		return 0
	}
	return ns / n
}

// readProfiled reads base.txt (the benchmark's line, or "# absent: …"/"# failed: …") and
// base.pprof. Anything missing or unreadable becomes its status, never an error.
func readProfiled(base string) profiled {
	data, err := os.ReadFile(base + ".txt")
	if err != nil {
		return profiled{status: "not profiled"}
	}
	line := strings.TrimSpace(string(data))
	if rest, ok := strings.CutPrefix(line, "#"); ok {
		return profiled{status: strings.TrimSpace(rest)}
	}
	p, err := parseBenchLine(line)
	if err != nil {
		return profiled{status: err.Error()}
	}
	f, err := os.Open(base + ".pprof")
	if err != nil {
		return profiled{status: "no profile"}
	}
	defer f.Close()
	prof, err := profile.Parse(f)
	if err != nil {
		return profiled{status: "unreadable profile: " + err.Error()}
	}
	p.add(prof)
	return p
}

// parseBenchLine reads a benchmark's output line: its name, N, and ns/op.
func parseBenchLine(line string) (profiled, error) {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
		return profiled{}, fmt.Errorf("not a benchmark line: %q", line)
	}
	n, err := strconv.ParseFloat(f[1], 64)
	if err != nil {
		return profiled{}, fmt.Errorf("no N in %q", line)
	}
	p := profiled{bench: f[0], n: n, flat: map[string]float64{}}
	for i := 2; i+1 < len(f); i += 2 {
		if f[i+1] == "ns/op" {
			p.nsOp, _ = strconv.ParseFloat(f[i], 64)
		}
	}
	return p, nil
}

// add puts every sample of prof in its category and under its leaf function.
func (p *profiled) add(prof *profile.Profile) {
	idx := -1
	for i, st := range prof.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			idx = i
		}
	}
	if idx < 0 {
		p.status = "no CPU time in the profile"
		return
	}
	if p.flat == nil {
		p.flat = map[string]float64{}
	}
	for _, s := range prof.Sample {
		v := float64(s.Value[idx])
		stack := frames(s)
		p.cpu[categorize(stack)] += v
		leaf := "?"
		for _, f := range stack {
			if f != "" {
				leaf = f
				break
			}
		}
		p.flat[leaf] += v
	}
}

// The three profiles of a path.
type pathProfiles struct {
	path                profilePath
	before, after, peer profiled
}

// readProfiles reads the profiles under dir (bench/profile's out/profiles). It returns the
// "before" revision ("" when there is none) and nil when dir holds no profile at all.
func readProfiles(dir string) (string, []pathProfiles) {
	if dir == "" {
		return "", nil
	}
	rev := ""
	if data, err := os.ReadFile(filepath.Join(dir, "before", "rev.txt")); err == nil {
		if f := strings.Fields(string(data)); len(f) > 0 {
			rev = f[0]
		}
	}
	var all []pathProfiles
	found := false
	for _, pp := range profilePaths {
		x := pathProfiles{
			path:   pp,
			before: readProfiled(filepath.Join(dir, "before", pp.id+"-ours")),
			after:  readProfiled(filepath.Join(dir, "after", pp.id+"-ours")),
			peer:   readProfiled(filepath.Join(dir, "after", pp.id+"-peer")),
		}
		if rev == "" {
			x.before = profiled{status: "no before side in this run"}
		}
		found = found || x.before.ok() || x.after.ok() || x.peer.ok()
		all = append(all, x)
	}
	if !found {
		return rev, nil
	}
	return rev, all
}
