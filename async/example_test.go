package async_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/resilience4go/resilience4go/async"
)

func ExampleNewPromise() {
	f, complete := async.NewPromise[string]()

	_, ok, _ := f.Result()
	fmt.Println("done:", ok)

	complete("hello", nil)
	complete("ignored", nil) // only the first completion counts

	v, err := f.Await(context.Background())
	fmt.Println(v, err)
	// Output:
	// done: false
	// hello <nil>
}

func ExampleGo() {
	f := async.Go(context.Background(), func(ctx context.Context) (int, error) {
		return 6 * 7, nil
	})
	v, err := f.Await(context.Background())
	fmt.Println(v, err)

	started := make(chan struct{})
	slow := async.Go(context.Background(), func(ctx context.Context) (int, error) {
		close(started)
		<-ctx.Done() // Cancel cancels fn's context
		return 0, ctx.Err()
	})
	<-started
	fmt.Println("stopped before start:", slow.Cancel())
	_, err = slow.Await(context.Background())
	fmt.Println(errors.Is(err, async.ErrCanceled))
	// Output:
	// 42 <nil>
	// stopped before start: false
	// true
}

func ExampleMap() {
	f, complete := async.NewPromise[string]()
	upper := async.Map(f, func(s string) (string, error) { return strings.ToUpper(s), nil })
	complete("geocode", nil)
	v, err := upper.Await(context.Background())
	fmt.Println(v, err)

	failed := async.Map(async.Failed[string](errors.New("quota")), func(s string) (int, error) {
		return len(s), nil // not called: the error passes through
	})
	_, err = failed.Await(context.Background())
	fmt.Println(err)
	// Output:
	// GEOCODE <nil>
	// quota
}
