// Command report turns a benchmark run of the bench module into bench/RESULTS.md and
// bench/chart.svg, and refreshes the headline figures in bench/README.md.
//
// It reads the raw go test -bench output (several runs of every benchmark, from -count),
// takes the median of every benchmark's ns/op, B/op and allocs/op, sets our calls against
// the peers' and the reference, checks the targets, and describes the machine: the CPU
// model, the Go version and the peers' versions from go.mod. The accuracy figures come
// from the JSON that TestAccuracy writes; benchstat's summary, when given, is included as
// it is. The chart is an SVG drawn here, with no plotting tool.
//
// Usage (from bench/, as ./run does):
//
//	go run ./cmd/report -raw out/raw.txt -benchstat out/benchstat.txt \
//	    -accuracy out/accuracy.json -benchtime 500ms -count 5 -cpu 1,2
package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

type options struct {
	raw, benchstat, accuracy, gomod string
	results, chart, readme          string
	benchtime, count, rounds, cpu   string
	accuracyDuration, loadBefore    string
	loadAfter, date                 string
	cpuModel                        string
	profiles                        string
}

// accuracy mirrors the JSON written by TestAccuracy.
type accuracy struct {
	Library     string        `json:"library"`
	Limiter     string        `json:"limiter"`
	Burst       string        `json:"burst"`
	Attempts    int64         `json:"attempts"`
	Admitted    int64         `json:"admitted"`
	Elapsed     time.Duration `json:"elapsed_ns"`
	Bound       int64         `json:"bound"`
	Over        int64         `json:"over"`
	MaxInPeriod int           `json:"max_in_period"`
}

func main() {
	var o options
	flag.StringVar(&o.raw, "raw", "out/raw.txt", "go test -bench output, with -count runs")
	flag.StringVar(&o.benchstat, "benchstat", "", "benchstat's summary of -raw, included as is (optional)")
	flag.StringVar(&o.accuracy, "accuracy", "", "TestAccuracy's JSON (optional)")
	flag.StringVar(&o.gomod, "gomod", "go.mod", "the bench module's go.mod, for the peers' versions")
	flag.StringVar(&o.results, "results", "RESULTS.md", "the report to write")
	flag.StringVar(&o.chart, "chart", "chart.svg", "the chart to write, linked from the report by its base name")
	flag.StringVar(&o.readme, "readme", "README.md", "the READMEs whose headline block to refresh, comma-separated (empty: none)")
	flag.StringVar(&o.benchtime, "benchtime", "", "the -benchtime of the run, for the report")
	flag.StringVar(&o.count, "count", "", "the -count of the run, for the report")
	flag.StringVar(&o.rounds, "rounds", "1", "how many times the benchmarks were run with -count, one after the other, for the report")
	flag.StringVar(&o.cpu, "cpu", "", "the -cpu of the run, for the report")
	flag.StringVar(&o.accuracyDuration, "accuracy-duration", "", "the accuracy run's duration, for the report")
	flag.StringVar(&o.loadBefore, "load-before", "", "/proc/loadavg before the run, for the report")
	flag.StringVar(&o.loadAfter, "load-after", "", "/proc/loadavg after the run, when the report is remade later (default: now)")
	flag.StringVar(&o.date, "date", "", "when the run ended, as 2006-01-02 15:04 UTC, when the report is remade later (default: now)")
	flag.StringVar(&o.cpuModel, "cpu-model", "", "the CPU model of the machine the benchmarks ran on, when the report is made on another (default: this machine's)")
	flag.StringVar(&o.profiles, "profiles", "", "bench/profile's output directory, for the section on where the time goes (optional)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	f, err := os.Open(o.raw)
	if err != nil {
		return err
	}
	res, err := parseBench(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %v", o.raw, err)
	}
	var acc []accuracy
	if o.accuracy != "" {
		data, err := os.ReadFile(o.accuracy)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, &acc); err != nil {
			return fmt.Errorf("%s: %v", o.accuracy, err)
		}
	}
	var stat string
	if o.benchstat != "" {
		data, err := os.ReadFile(o.benchstat)
		if err != nil {
			return err
		}
		stat = string(data)
	}
	peers, err := peerVersions(o.gomod)
	if err != nil {
		return err
	}
	env := machine(res, o)
	rep := &report{res: res, acc: acc, benchstat: stat, peers: peers, env: env, opts: o}
	// Serial at the lowest GOMAXPROCS of the run, parallel at the highest.
	rep.modes = []mode{{parallel: false, procs: res.procs[0]}, {parallel: true, procs: res.procs[len(res.procs)-1]}}
	rep.verdicts = checkTargets(res, rep.modes, acc)
	rep.profileRev, rep.profiles = readProfiles(o.profiles)

	if err := os.WriteFile(o.chart, []byte(drawChart(rep)), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(o.results, []byte(rep.markdown()), 0o644); err != nil {
		return err
	}
	for _, readme := range strings.Split(o.readme, ",") {
		if readme == "" {
			continue
		}
		if err := refreshReadme(readme, linksFrom(readme, o.results, rep.headline())); err != nil {
			return err
		}
	}
	for _, v := range rep.verdicts {
		state := "met"
		if v.short != "" {
			state = "met (" + v.short + ")"
		}
		if !v.ok {
			state = "not measured"
		} else if !v.met {
			state = "MISSED (" + v.short + ")"
		}
		fmt.Printf("%-100s %-26s %s\n", v.target, v.mode, state)
	}
	return nil
}

// env describes where the run happened.
type env struct {
	cpuModel, cpuBench, goVersion, kernel, date string
	cpus                                        int
	loadBefore, loadAfter                       string
}

func machine(res *results, o options) env {
	e := env{
		cpuBench:   res.headers["cpu"],
		cpus:       runtime.NumCPU(),
		date:       cmp.Or(o.date, time.Now().UTC().Format("2006-01-02 15:04 MST")),
		loadBefore: strings.TrimSpace(o.loadBefore),
	}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				e.cpuModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if o.cpuModel != "" {
		e.cpuModel = o.cpuModel
	}
	if e.cpuModel == "" {
		e.cpuModel = e.cpuBench
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		e.kernel = "Linux " + strings.TrimSpace(string(data))
	} else {
		e.kernel = runtime.GOOS
	}
	if e.loadAfter = strings.TrimSpace(o.loadAfter); e.loadAfter == "" {
		if data, err := os.ReadFile("/proc/loadavg"); err == nil {
			e.loadAfter = strings.TrimSpace(string(data))
		}
	}
	if out, err := exec.Command("go", "version").Output(); err == nil {
		e.goVersion = strings.TrimSpace(string(out))
	} else {
		e.goVersion = runtime.Version()
	}
	return e
}

// The peers, by module path, in the order the report lists them.
var peerModules = []struct{ path, short string }{
	{"golang.org/x/time", "x/time/rate"},
	{"go.uber.org/ratelimit", "uber ratelimit"},
	{"github.com/failsafe-go/failsafe-go", "failsafe-go"},
}

// peerVersions reads the required versions of the peers from go.mod.
func peerVersions(gomod string) (map[string]string, error) {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return nil, err
	}
	versions := map[string]string{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(string(line)), "require "))
		if len(f) >= 2 {
			for _, p := range peerModules {
				if f[0] == p.path {
					versions[p.path] = f[1]
				}
			}
		}
	}
	return versions, nil
}

// linksFrom rewrites the headline's links to the results file so that they work from the
// README at readme: "RESULTS.md" becomes, e.g., "bench/RESULTS.md" for the repository's
// own README.
func linksFrom(readme, results, headline string) string {
	from, err1 := filepath.Abs(filepath.Dir(readme))
	to, err2 := filepath.Abs(filepath.Dir(results))
	if err1 != nil || err2 != nil {
		return headline
	}
	rel, err := filepath.Rel(from, to)
	if err != nil || rel == "." {
		return headline
	}
	base := filepath.Base(results)
	return strings.ReplaceAll(headline, "]("+base, "]("+filepath.ToSlash(rel)+"/"+base)
}
