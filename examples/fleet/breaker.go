//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	cbredis "github.com/resilience4go/resilience4go/policy/circuitbreaker/redis"
)

// The breaker scenario's settings: the breaker opens on 20 calls of which half fail, stays
// open waitInOpen, then lets trials through, at most trials in the fleet.
const (
	waitInOpen = time.Second
	trials     = 3
)

// breakerReport is what an instance of the breaker scenario tells the command: the
// wall-clock instants (ns) its breaker opened and closed again, whether it opened on its
// own calls or followed the fleet, and how many of its calls ran the dependency while
// its breaker was not closed (the half-open trials).
type breakerReport struct {
	Opened, Closed int64
	Followed       bool
	Trials         int64
	Ping           time.Duration // the median PING round trip while the breakers were open
}

var errDown = errors.New("dependency down")

// runBreaker is one instance of the breaker scenario: instance 0 sees the dependency fail
// until its breaker opens; the others call a dependency that answers. From then on the
// dependency answers every instance's calls, and each calls it in a loop until its breaker
// is closed again.
func runBreaker(ctx context.Context, w io.Writer, cfg instanceConfig) error {
	c := client(cfg.Addrs)
	defer c.Close()
	fleet, err := cbredis.New(c, cbredis.Prefix(cfg.Prefix))
	if err != nil {
		return err
	}
	defer fleet.Close()
	var r breakerReport
	var mu sync.Mutex
	closed := make(chan struct{})
	b, err := circuitbreaker.New(circuitbreaker.Name("dependency"), circuitbreaker.WithFleet(fleet),
		circuitbreaker.SlidingWindowSize(20), circuitbreaker.MinimumCalls(20),
		circuitbreaker.WaitInOpen(waitInOpen), circuitbreaker.PermittedInHalfOpen(trials),
		circuitbreaker.OnEvent(func(e policy.Event) {
			if e.Kind != circuitbreaker.EventTransition {
				return
			}
			now := time.Now().UnixNano()
			mu.Lock()
			defer mu.Unlock()
			switch e.Attr("to").String() {
			case circuitbreaker.Open:
				if r.Opened == 0 {
					fleet := e.Attr("fleet")
					r.Opened, r.Followed = now, fleet.Kind() == slog.KindBool && fleet.Bool()
				}
			case circuitbreaker.Closed:
				if r.Opened != 0 && r.Closed == 0 {
					r.Closed = now
					close(closed)
				}
			}
		}))
	if err != nil {
		return err
	}
	var down atomic.Bool
	down.Store(cfg.Index == 0)
	var ran atomic.Int64 // calls that ran the dependency while the breaker was open or half-open
	call := circuitbreaker.NewPolicy[int](b).Decorate(func(context.Context) (int, error) {
		if b.Snapshot().State != circuitbreaker.Closed {
			ran.Add(1)
		}
		if down.Load() {
			return 0, errDown
		}
		return 1, nil
	})
	time.Sleep(time.Until(time.Unix(0, cfg.Start)))
	deadline := time.After(cfg.Span)
	var ping sync.Once
	pinged := make(chan time.Duration, 1)
	for {
		select {
		case <-closed:
			r.Trials = ran.Load()
			select {
			case r.Ping = <-pinged:
			case <-time.After(time.Second):
			}
			return json.NewEncoder(w).Encode(r)
		case <-deadline:
			return errors.New("the breaker did not open and close again within the run")
		default:
		}
		if _, err := call(ctx); errors.Is(err, circuitbreaker.ErrOpen) {
			down.Store(false) // the dependency is back by the time the breaker lets a trial through
			// The round trip to Redis on this machine under this load, to compare the
			// follow latency with.
			ping.Do(func() { go func() { pinged <- pingWhileOpen(ctx, c) }() })
		}
		time.Sleep(100 * time.Microsecond) // a call every 100µs or so: a busy instance, not a spinning one
	}
}

// pingWhileOpen returns the median of 20 PING round trips on c, 1ms apart.
func pingWhileOpen(ctx context.Context, c goredis.UniversalClient) time.Duration {
	ds := make([]time.Duration, 0, 20)
	for range 20 {
		t0 := time.Now()
		if c.Ping(ctx).Err() == nil {
			ds = append(ds, time.Since(t0))
		}
		time.Sleep(time.Millisecond)
	}
	if len(ds) == 0 {
		return 0
	}
	return median(ds)
}
