//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	goredis "github.com/redis/go-redis/v9"

	rlredis "github.com/resilience4go/resilience4go/ratelimit/redis"
)

// fleet is the command's side of a run: the Redis it shares, and how it starts instances.
type fleet struct {
	o      options
	addrs  []string
	nodes  []*goredis.Client
	server *redisServer // the redis-server of its own; nil for REDIS_ADDR's or the cluster
	exe    string
	dir    string // the record files
	span   time.Duration
	runs   int
}

func newFleet(ctx context.Context, o options) (*fleet, error) {
	if o.instances < 1 || o.workers < 1 || o.permits < 1 || o.period <= 0 || o.seconds <= 0 {
		return nil, errors.New("instances, workers, permits, period and seconds must be positive")
	}
	f := &fleet{o: o, span: time.Duration(o.seconds * float64(time.Second))}
	switch {
	case o.cluster:
		f.addrs = strings.Split(os.Getenv("REDIS_CLUSTER_ADDRS"), ",")
		if f.addrs[0] == "" {
			return nil, errors.New("-cluster needs REDIS_CLUSTER_ADDRS, the masters' addresses")
		}
	case os.Getenv("REDIS_ADDR") != "":
		f.addrs = []string{os.Getenv("REDIS_ADDR")}
	default:
		s, err := startRedis(ctx)
		if err != nil {
			return nil, err
		}
		f.server, f.addrs = s, []string{s.addr}
	}
	f.nodes = nodes(f.addrs)
	var err error
	if f.exe, err = os.Executable(); err == nil {
		f.dir, err = os.MkdirTemp("", "fleet-")
	}
	if err != nil {
		f.close()
		return nil, err
	}
	return f, nil
}

func (f *fleet) close() {
	for _, c := range f.nodes {
		c.Close()
	}
	if f.server != nil {
		f.server.stop()
	}
	if f.dir != "" {
		os.RemoveAll(f.dir)
	}
}

// instance is a running instance: its process, what it prints, its admissions.
type instance struct {
	cmd  *exec.Cmd
	out  bytes.Buffer
	recs *recordFile
}

// group is the instances of one run.
type group struct {
	cfg       instanceConfig
	instances []*instance
	start     time.Time
	commands  int64 // the commands Redis had served before the run
}

// launch starts the instances of one run, at lease life lease (0: none) and the fair
// share's heartbeat hb (0: none), to start together a little later.
func (f *fleet) launch(ctx context.Context, lease, hb time.Duration) (*group, error) {
	return f.launchAs(ctx, lease, hb, false)
}

// launchAs is launch, for the breaker scenario when breaker is true.
func (f *fleet) launchAs(ctx context.Context, lease, hb time.Duration, breaker bool) (*group, error) {
	f.runs++
	start := time.Now().Add(500*time.Millisecond + time.Duration(f.o.instances)*50*time.Millisecond)
	g := &group{start: start, cfg: instanceConfig{Addrs: f.addrs,
		Prefix:  "fleet:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":",
		Permits: f.o.permits, Period: f.o.period, Leases: lease, Heartbeat: hb, Workers: f.o.workers,
		Start: start.UnixNano(), Span: f.span, Timeout: f.o.timeout, Breaker: breaker}}
	var err error
	if g.commands, err = commands(ctx, f.nodes); err != nil {
		return nil, err
	}
	for i := range f.o.instances {
		cfg := g.cfg
		cfg.Index = i
		cfg.Records = filepath.Join(f.dir, fmt.Sprintf("run%d-instance%d", f.runs, i))
		in := &instance{}
		if in.recs, err = createRecords(cfg.Records); err != nil {
			g.stop()
			return nil, err
		}
		js, _ := json.Marshal(cfg)
		in.cmd = exec.Command(f.exe)
		in.cmd.Env = append(os.Environ(), envInstance+"="+string(js))
		in.cmd.Stdout, in.cmd.Stderr = &in.out, &in.out
		if err := in.cmd.Start(); err != nil {
			in.recs.close()
			g.stop()
			return nil, err
		}
		g.instances = append(g.instances, in)
	}
	return g, nil
}

// stop kills what still runs of g and unmaps its record files.
func (g *group) stop() {
	for _, in := range g.instances {
		if in.cmd.ProcessState == nil {
			_ = in.cmd.Process.Kill()
			_ = in.cmd.Wait()
		}
		in.recs.close()
	}
}

// result is what a run did.
type result struct {
	admissions []record
	each       [][]record // the admissions of each instance
	decisions  int64
	failures   int64              // the failures of Redis the instances' limiters reported
	leases     rlredis.LeaseStats // the sum of the instances' that ran to the end
	commands   int64              // served by Redis during the run
	killed     []int              // the instances killed with SIGKILL
}

// wait waits for every instance of g, and gathers what they did; an instance in killed
// was killed on purpose.
func (f *fleet) wait(ctx context.Context, g *group, killed ...int) (result, error) {
	defer g.stop()
	r := result{killed: killed}
	for i, in := range g.instances {
		err := in.cmd.Wait()
		if err != nil && !slices.Contains(killed, i) {
			return r, fmt.Errorf("instance %d: %v: %s", i, err, in.out.String())
		}
		recs, dec := in.recs.read()
		r.admissions = append(r.admissions, recs...)
		r.each = append(r.each, recs)
		r.decisions += dec
		r.failures += in.recs.failures()
		var rep instanceReport
		if !slices.Contains(killed, i) && json.Unmarshal(in.out.Bytes(), &rep) == nil {
			r.leases.Leases += rep.Leases.Leases
			r.leases.Leased += rep.Leases.Leased
			r.leases.Used += rep.Leases.Used
			r.leases.Returned += rep.Leases.Returned
			r.leases.Wasted += rep.Leases.Wasted
		}
	}
	n, err := commands(ctx, f.nodes)
	r.commands = n - g.commands
	return r, err
}

// kill kills instance i of g with SIGKILL.
func (g *group) kill(i int) error { return g.instances[i].cmd.Process.Signal(syscall.SIGKILL) }

// summary prints a run's figures against the bound, on one line.
func (f *fleet) summary(r result) string {
	over, _ := overBound(r.admissions, f.o.permits, f.o.period)
	t := (int64(f.o.period) + int64(f.o.permits) - 1) / int64(f.o.permits)
	bound := f.o.permits + int(int64(f.span)/t)
	s := f.span.Seconds()
	return fmt.Sprintf("admitted %d, bound %d, over the bound %d; %s decisions/s; %s Redis commands/s (%.3g per decision); Redis failed %d times",
		len(r.admissions), bound, over, count(float64(r.decisions)/s), count(float64(r.commands)/s), perDecision(r), r.failures)
}

// leaseSummary prints what a run's leases did: the permits leased, used, given back and
// wasted, against the price the leases state, k per lease (instances × k per life).
func (f *fleet) leaseSummary(r result) string {
	l := r.leases
	k := float64(l.Leased) / float64(max(l.Leases, 1))
	return fmt.Sprintf("%d leases of %.0f permits on average (k): %d leased, %d used, %d given back, %d wasted (instances x k = %.0f per life)",
		l.Leases, k, l.Leased, l.Used, l.Returned, l.Wasted, float64(f.o.instances)*k)
}

// count prints n rounded to 3 significant digits, with thousands separated.
func count(n float64) string {
	v := int64(n)
	for p := int64(1); v >= 1000*p; p *= 10 {
		v = v / (10 * p) * (10 * p)
	}
	s := strconv.FormatInt(v, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
