package fallback_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/fallback"
)

func ExampleNew() {
	errUnavailable := errors.New("unavailable")
	f, err := fallback.New(
		func(ctx context.Context, err error) ([]string, error) { return []string{"cached result"}, nil },
		fallback.IgnoreOn(context.Canceled), // a caller's cancellation is returned as it is
		fallback.WithClock(clock.NewManual()),
		fallback.OnEvent(func(e policy.Event) { fmt.Println(e) }),
	)
	if err != nil {
		panic(err)
	}
	search := fallback.NewPolicy(f).Decorate(func(ctx context.Context) ([]string, error) {
		return nil, errUnavailable
	})

	fmt.Println(search(context.Background()))
	// Output:
	// FallbackApplied at=0s err=unavailable
	// [cached result] <nil>
}
