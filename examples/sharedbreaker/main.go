// Command sharedbreaker shares one circuit breaker among the instances of a service
// through Redis: three instances (here three clients in one process, as three processes
// would be) guard the same dependency with a breaker named "inventory"; when one sees it
// fail and opens, the others refuse at once, and one trial closes them all. The server
// is REDIS_ADDR, or localhost:6379.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	cbredis "github.com/resilience4go/resilience4go/policy/circuitbreaker/redis"
)

var errDown = errors.New("inventory service down")

func main() {
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		addr = "localhost:6379"
	}
	if err := run(context.Background(), os.Stdout, addr); err != nil {
		log.Fatal(err)
	}
}

// instance is one process of the service.
type instance struct {
	client  *goredis.Client
	fleet   *cbredis.Fleet
	breaker *circuitbreaker.Breaker
}

func newInstance(addr string) (*instance, error) {
	// README:begin sharedbreaker
	client := goredis.NewClient(&goredis.Options{Addr: addr, ContextTimeoutEnabled: true})
	fleet, err := cbredis.New(client, cbredis.Prefix("shop:")) // keys {shop:<breaker name>}
	if err != nil {
		return nil, err
	}
	breaker, err := circuitbreaker.New(circuitbreaker.Name("inventory"), circuitbreaker.WithFleet(fleet),
		circuitbreaker.SlidingWindowSize(4), circuitbreaker.MinimumCalls(4),
		circuitbreaker.WaitInOpen(100*time.Millisecond), circuitbreaker.PermittedInHalfOpen(1))
	// README:end sharedbreaker
	if err != nil {
		return nil, err
	}
	return &instance{client: client, fleet: fleet, breaker: breaker}, nil
}

func (in *instance) close() {
	_ = in.fleet.Close()
	_ = in.client.Close()
}

// call calls the inventory service through the instance's breaker.
func (in *instance) call(ctx context.Context, up bool) error {
	_, err := circuitbreaker.NewPolicy[int](in.breaker).Decorate(func(context.Context) (int, error) {
		if !up {
			return 0, errDown
		}
		return 42, nil
	})(ctx)
	return err
}

// await waits, 2s at most, until every instance's breaker is in state.
func await(state string, ins []*instance) error {
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		all := true
		for _, in := range ins {
			all = all && in.breaker.Snapshot().State == state
		}
		if all {
			return nil
		}
		time.Sleep(time.Millisecond)
	}
	return fmt.Errorf("the instances did not all become %s", state)
}

func run(ctx context.Context, w io.Writer, addr string) error {
	// A fresh start: no state left by an earlier run.
	admin := goredis.NewClient(&goredis.Options{Addr: addr})
	defer admin.Close()
	if err := admin.Del(ctx, "{shop:inventory}").Err(); err != nil {
		return err
	}
	var ins []*instance
	defer func() {
		for _, in := range ins {
			in.close()
		}
	}()
	for range 3 {
		in, err := newInstance(addr)
		if err != nil {
			return err
		}
		ins = append(ins, in)
	}

	for range 4 {
		fmt.Fprintln(w, "instance 1:", ins[0].call(ctx, false))
	}
	fmt.Fprintln(w, "instance 1's breaker:", ins[0].breaker.Snapshot().State)
	if err := await(circuitbreaker.Open, ins); err != nil {
		return err
	}
	for i, in := range ins[1:] {
		fmt.Fprintf(w, "instance %d: %v\n", i+2, in.call(ctx, true))
	}

	time.Sleep(150 * time.Millisecond) // WaitInOpen is over: the next call is the trial
	fmt.Fprintln(w, "instance 2, trial:", ins[1].call(ctx, true))
	if err := await(circuitbreaker.Closed, ins); err != nil {
		return err
	}
	fmt.Fprintln(w, "every instance's breaker: closed")
	return nil
}
