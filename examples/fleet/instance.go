//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	rlredis "github.com/resilience4go/resilience4go/ratelimit/redis"
)

// envInstance names the environment variable that makes the command one instance of the
// fleet, its value the instance's configuration as JSON.
const envInstance = "FLEET_INSTANCE"

// instanceConfig is what an instance runs: its limiter on the shared quota, and the load
// it offers.
type instanceConfig struct {
	Index     int
	Addrs     []string      // one server, or the masters of a cluster
	Prefix    string        // the backend's prefix: one quota per run
	Permits   int           // the quota: Permits per Period, on one key
	Period    time.Duration //
	Leases    time.Duration // the lease life; 0: a round trip per decision
	Heartbeat time.Duration // the fair share's heartbeat expiry; 0: none
	Workers   int           // goroutines calling TryAcquire in a loop
	Start     int64         // wall-clock ns at which every instance starts
	Span      time.Duration // how long the load runs
	Records   string        // the record file of the admissions
	Timeout   time.Duration // the bound of a call to Redis
	Breaker   bool          // the breaker scenario (runBreaker) instead of the quota's
}

// instanceReport is what an instance that ran to the end tells the command.
type instanceReport struct {
	Decisions, Admitted int64
	Leases              rlredis.LeaseStats
}

// client returns a client of the server, or of the cluster when there are several addrs.
func client(addrs []string) goredis.UniversalClient {
	if len(addrs) > 1 {
		return goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true})
	}
	return goredis.NewClient(&goredis.Options{Addr: addrs[0], ContextTimeoutEnabled: true})
}

// runInstance is one instance of the fleet: Workers goroutines call TryAcquire on the
// hot key's limiter from Start for Span, each admission recorded with the interval of
// its call; then it reports on w.
func runInstance(ctx context.Context, w io.Writer, cfg instanceConfig) error {
	recs, err := openRecords(cfg.Records)
	if err != nil {
		return err
	}
	defer recs.close()
	c := client(cfg.Addrs)
	defer c.Close()
	// A generous timeout: a machine that runs many instances on few cores may keep one
	// from reading Redis's answer for a while, and a call Redis does not answer in time
	// takes the failure policy (each instance then limits itself).
	opts := []rlredis.Option{rlredis.Prefix(cfg.Prefix), rlredis.Leases(cfg.Leases), rlredis.Timeout(cfg.Timeout)}
	if cfg.Heartbeat > 0 {
		opts = append(opts, rlredis.Heartbeat(cfg.Heartbeat))
	}
	shared, err := rlredis.New(c, opts...)
	if err != nil {
		return err
	}
	lim, err := ratelimit.New(ratelimit.Name("hot"), ratelimit.Permits(cfg.Permits), ratelimit.Period(cfg.Period),
		ratelimit.WithBackend(shared), ratelimit.OnEvent(func(e policy.Event) {
			if e.Kind == backend.EventFailed || e.Kind == backend.EventKeyFailed {
				recs.failed()
			}
		}))
	if err != nil {
		return err
	}
	start := time.Unix(0, cfg.Start)
	end := start.Add(cfg.Span)
	time.Sleep(time.Until(start))
	var decisions, admitted atomic.Int64
	var wg sync.WaitGroup
	for range cfg.Workers {
		wg.Go(func() {
			var n, ok int64
			for {
				t0 := time.Now()
				if !t0.Before(end) {
					break
				}
				if lim.TryAcquire() {
					if !recs.add(t0.UnixNano(), time.Now().UnixNano()) {
						break
					}
					ok++
				}
				if n++; n%1024 == 0 {
					recs.decided(1024)
				}
			}
			recs.decided(n % 1024)
			decisions.Add(n)
			admitted.Add(ok)
		})
	}
	wg.Wait()
	if err := shared.Close(); err != nil { // gives back what its leases hold
		return fmt.Errorf("close the backend: %w", err)
	}
	return json.NewEncoder(w).Encode(instanceReport{Decisions: decisions.Load(), Admitted: admitted.Load(),
		Leases: shared.Leases()})
}
