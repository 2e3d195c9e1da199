package retry_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/retry"
)

// step is one event expected of a call: its kind and attempt.
type step struct {
	kind    policy.EventKind
	attempt int
}

// outcomeCases are calls whose attempts fail with errs (nil: success; the last entry
// repeats), with the events each must publish: RetryExhausted only when every attempt
// was made and the last failed with an error that is retried, RetryAborted when an
// outcome that is not retried ends the retry, whichever attempt it is.
var outcomeCases = []struct {
	name string
	opts []retry.Option
	errs []error
	want []step
}{
	{"retried until the attempts run out", nil, []error{errBoom},
		[]step{{retry.EventAttempt, 1}, {retry.EventAttempt, 2}, {retry.EventExhausted, 3}}},
	{"success after a retry", nil, []error{errBoom, nil},
		[]step{{retry.EventAttempt, 1}}},
	{"first attempt matches AbortOn", []retry.Option{retry.AbortOn(errOther)}, []error{errOther},
		[]step{{retry.EventAborted, 1}}},
	{"first attempt outside RetryOn", []retry.Option{retry.On(errBoom)}, []error{errOther},
		[]step{{retry.EventAborted, 1}}},
	{"first attempt outside RetryOn and RetryIf", []retry.Option{retry.On(errBoom),
		retry.If(func(_ int, err error) bool { return err == errBoom })}, []error{errOther},
		[]step{{retry.EventAborted, 1}}},
	{"first attempt never retried", nil, []error{openError{never: true}},
		[]step{{retry.EventAborted, 1}}},
	{"second attempt matches AbortOn", []retry.Option{retry.AbortOn(errOther)}, []error{errBoom, errOther},
		[]step{{retry.EventAttempt, 1}, {retry.EventAborted, 2}}},
	{"last attempt matches AbortOn", []retry.Option{retry.AbortOn(errOther)}, []error{errBoom, errBoom, errOther},
		[]step{{retry.EventAttempt, 1}, {retry.EventAttempt, 2}, {retry.EventAborted, 3}}},
	{"one attempt, retryable", []retry.Option{retry.MaxAttempts(1)}, []error{errBoom},
		[]step{{retry.EventExhausted, 1}}},
	{"one attempt, not retryable", []retry.Option{retry.MaxAttempts(1), retry.AbortOn(errOther)}, []error{errOther},
		[]step{{retry.EventAborted, 1}}},
}

// steps returns the kind and attempt of each event, and checks that each terminal
// event carries the error the call returned.
func steps(t *testing.T, got []policy.Event, callErr error) []step {
	t.Helper()
	out := make([]step, len(got))
	for i, e := range got {
		out[i] = step{e.Kind, e.Attempt}
		switch e.Kind {
		case retry.EventExhausted, retry.EventAborted:
			assert.Equal(t, callErr, e.Err, "the terminal event carries the call's error")
			assert.Zero(t, e.Wait, "no wait follows")
		case retry.EventAttempt:
			assert.Equal(t, 500*time.Millisecond, e.Wait, "Wait is the wait before the next attempt")
		}
	}
	return out
}

// Each kind of retry event says one thing: RetryExhausted only for attempts spent on an
// error that is retried, RetryAborted for an error that is not, the first attempt's
// included (fault: RetryExhausted was published for an error never retried).
func TestEndEvents(t *testing.T) {
	for _, c := range outcomeCases {
		t.Run(c.name, func(t *testing.T) {
			clk := clock.NewManual()
			ev := &events{}
			r := newRetry(t, append([]retry.Option{retry.WithClock(clk), retry.OnEvent(ev.listen)}, c.opts...)...)
			rec := &recorder{clk: clk, errs: c.errs}
			_, err := retry.DecorateFunc(r, rec.call)(context.Background(), struct{}{})
			assert.Equal(t, c.want, steps(t, ev.get(), err))
		})
	}
}

// The same events for asynchronous calls, whose futures are complete when the function
// returns them or complete later on the clock (fault: RetryExhausted was published for
// an error never retried).
func TestAsyncEndEvents(t *testing.T) {
	for _, later := range []bool{false, true} {
		for _, c := range outcomeCases {
			t.Run(fmt.Sprintf("%s/later=%v", c.name, later), func(t *testing.T) {
				clk := clock.NewManual()
				ev := &events{}
				r := newRetry(t, append([]retry.Option{retry.WithClock(clk), retry.OnEvent(ev.listen)}, c.opts...)...)
				calls := 0
				fut := retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] {
					err := c.errs[min(calls, len(c.errs)-1)]
					calls++
					if !later {
						if err != nil {
							return async.Failed[int](err)
						}
						return async.Completed(calls)
					}
					f, complete := async.NewPromise[int]()
					clk.AfterFunc(10*time.Millisecond, func() { complete(calls, err) })
					return f
				})(context.Background(), struct{}{})
				_, err := driveAsync(t, clk, fut)
				assert.Equal(t, c.want, steps(t, ev.get(), err))
			})
		}
	}
}

// A context that ends during the retry aborts it: RetryAborted, with an error that
// matches the context's, whether it ends during an attempt or during a wait; sync and
// async (fault: RetryExhausted was published for a retry that had attempts left).
func TestContextEndAbortsTheRetry(t *testing.T) {
	t.Run("sync, during an attempt", func(t *testing.T) {
		ev := &events{}
		r := newRetry(t, retry.WithClock(clock.NewManual()), retry.OnEvent(ev.listen))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		_, err := retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) {
			cancel()
			return 0, errBoom
		})(ctx, struct{}{})
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorIs(t, err, errBoom)
		assert.Equal(t, []step{{retry.EventAborted, 1}}, steps(t, ev.get(), err))
	})
	t.Run("sync, during a wait", func(t *testing.T) {
		clk := clock.NewManual()
		ev := &events{}
		r := newRetry(t, retry.WithClock(clk), retry.OnEvent(ev.listen))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		clk.AfterFunc(700*time.Millisecond, cancel) // during the second wait
		rec := &recorder{clk: clk, errs: []error{errBoom}}
		_, err := retry.DecorateFunc(r, rec.call)(ctx, struct{}{})
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, []step{{retry.EventAttempt, 1}, {retry.EventAttempt, 2}, {retry.EventAborted, 2}},
			steps(t, ev.get(), err))
	})
	t.Run("async, during an attempt", func(t *testing.T) {
		clk := clock.NewManual()
		ev := &events{}
		r := newRetry(t, retry.WithClock(clk), retry.OnEvent(ev.listen))
		fn := &asyncFn{clk: clk}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		fut := retry.DecorateAsyncFunc(r, fn.call)(ctx, struct{}{})
		fn.last().complete(0, errBoom)
		clk.Advance(500 * time.Millisecond)
		cancel()
		fn.last().complete(0, errBoom)
		_, err := settled(t, fut)
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, []step{{retry.EventAttempt, 1}, {retry.EventAborted, 2}}, steps(t, ev.get(), err))
	})
	t.Run("async, during a wait", func(t *testing.T) {
		clk := clock.NewManual()
		ev := &events{}
		r := newRetry(t, retry.WithClock(clk), retry.OnEvent(ev.listen))
		fn := &asyncFn{clk: clk}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		fut := retry.DecorateAsyncFunc(r, fn.call)(ctx, struct{}{})
		fn.last().complete(0, errBoom)
		cancel()
		_, err := await(t, fut)
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, []step{{retry.EventAttempt, 1}, {retry.EventAborted, 1}}, steps(t, ev.get(), err))
	})
}
