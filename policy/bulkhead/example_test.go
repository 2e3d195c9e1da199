package bulkhead_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
)

// Two slots for a slow backend. Asynchronous calls beyond them queue for up to 100ms
// (on a manual clock here), without a goroutine each.
func ExampleNew() {
	clk := clock.NewManual()
	b, err := bulkhead.New(bulkhead.MaxConcurrent(2), bulkhead.MaxWait(100*time.Millisecond),
		bulkhead.WithClock(clk), bulkhead.Name("Backend.Fetch"))
	if err != nil {
		panic(err)
	}
	var finish []func(string, error)
	p := bulkhead.NewPolicy[string](b)
	fetch := func(key string) *async.Future[string] {
		return p.DecorateAsync(func(context.Context) *async.Future[string] {
			f, complete := async.NewPromise[string]()
			finish = append(finish, func(v string, err error) { complete(v+key, err) })
			return f
		})(context.Background())
	}

	a, bb, c, d := fetch("a"), fetch("b"), fetch("c"), fetch("d")
	fmt.Printf("%+v\n", b.Snapshot())

	finish[0]("value of ", nil) // a completes: its slot goes to c, the oldest waiter
	fmt.Println(a.Result())
	fmt.Printf("%+v\n", b.Snapshot())

	clk.Advance(100 * time.Millisecond) // d waited too long
	_, _, err = d.Result()
	fmt.Println(err, errors.Is(err, bulkhead.ErrFull))

	finish[1]("value of ", nil)
	finish[2]("value of ", nil)
	fmt.Println(bb.Result())
	fmt.Println(c.Result())
	fmt.Printf("%+v\n", b.Snapshot())
	// Output:
	// {Instance:Backend.Fetch AvailableSlots:0 MaxConcurrent:2 Waiting:2 Shed:[0 0 0 0] ShadowRejected:0}
	// value of a true <nil>
	// {Instance:Backend.Fetch AvailableSlots:0 MaxConcurrent:2 Waiting:1 Shed:[0 0 0 0] ShadowRejected:0}
	// bulkhead: bulkhead "Backend.Fetch" is full true
	// value of b true <nil>
	// value of c true <nil>
	// {Instance:Backend.Fetch AvailableSlots:2 MaxConcurrent:2 Waiting:0 Shed:[0 0 0 0] ShadowRejected:0}
}
