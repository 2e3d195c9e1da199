//go:build unix

// Command fleet runs a fleet of instances, each a process on loopback, on one quota in
// Redis, and offers them more load than the quota on one hot key: it shows what the
// fleet admits against the GCRA bound, how many decisions per second it makes and how
// many commands Redis serves, with a round trip per decision and with leases.
//
//	go run ./examples/fleet -instances 8 -seconds 10
//	go run ./examples/fleet -scenario kill     # kill -9 of an instance that holds a lease
//	go run ./examples/fleet -scenario outage   # Redis paused: the live fair share
//	go run ./examples/fleet -scenario breaker  # a circuit breaker the fleet shares
//
// The server is REDIS_ADDR, or a redis-server of its own (REDIS_CLUSTER_ADDRS and
// -cluster: a Redis Cluster).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"
)

// options are the command's flags.
type options struct {
	instances int
	seconds   float64
	workers   int
	permits   int
	period    time.Duration
	lease     time.Duration
	heartbeat time.Duration
	timeout   time.Duration
	scenario  string
	cluster   bool
}

func main() {
	if js, ok := os.LookupEnv(envInstance); ok {
		instanceMain(js)
		return
	}
	var o options
	flag.IntVar(&o.instances, "instances", 8, "instances (processes) on the quota")
	flag.Float64Var(&o.seconds, "seconds", 10, "how long each run offers load")
	flag.IntVar(&o.workers, "workers", 4, "goroutines per instance calling TryAcquire in a loop")
	flag.IntVar(&o.permits, "permits", 1000, "the quota: permits per period")
	flag.DurationVar(&o.period, "period", time.Second, "the quota's period")
	flag.DurationVar(&o.lease, "lease", 500*time.Millisecond, "the lease life")
	flag.DurationVar(&o.heartbeat, "heartbeat", time.Second, "the fair share's heartbeat expiry (scenario outage)")
	flag.DurationVar(&o.timeout, "timeout", time.Second, "the bound of a call to Redis, after which the failure policy decides")
	flag.StringVar(&o.scenario, "scenario", "quota", "quota, kill, outage or breaker")
	flag.BoolVar(&o.cluster, "cluster", false, "use the Redis Cluster at REDIS_CLUSTER_ADDRS")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, o); err != nil {
		log.Fatal(err)
	}
}

// instanceMain runs the process as one instance of the fleet, configured by js.
func instanceMain(js string) {
	var cfg instanceConfig
	if err := json.Unmarshal([]byte(js), &cfg); err != nil {
		log.Fatalf("instance: %v", err)
	}
	do := runInstance
	if cfg.Breaker {
		do = runBreaker
	}
	if err := do(context.Background(), os.Stdout, cfg); err != nil {
		log.Fatalf("instance %d: %v", cfg.Index, err)
	}
}

// run runs the scenario of o and prints what it measured on w.
func run(ctx context.Context, w io.Writer, o options) error {
	f, err := newFleet(ctx, o)
	if err != nil {
		return err
	}
	defer f.close()
	d, err := rtt(ctx, f.nodes, 50)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "fleet: %d instances x %d workers, quota %d per %v on one key, %v per run, Redis %s (PING %v)\n",
		o.instances, o.workers, o.permits, o.period, f.span, strings.Join(f.addrs, ","), d.Round(time.Microsecond))
	switch o.scenario {
	case "quota":
		return f.quota(ctx, w)
	case "kill":
		return f.kill(ctx, w)
	case "outage":
		return f.outage(ctx, w)
	case "breaker":
		return f.breaker(ctx, w, d)
	}
	return fmt.Errorf("unknown scenario %q: quota, kill, outage or breaker", o.scenario)
}
