package retry_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/policy/observe"
	"github.com/resilience4go/resilience4go/policy/retry"
)

// deadlineCases are waits after a first failed attempt, each with a deadline that comes
// before the wait would end (CO-10): the backoff, a server's Retry-After, and the wait for
// a rate limiter's permit with WaitForPermit.
var deadlineCases = []struct {
	name string
	opts []retry.Option
	err  error
}{
	{"backoff", []retry.Option{retry.Delay(time.Hour)}, errBoom},
	{"retry-after", []retry.Option{retry.Delay(time.Millisecond)},
		&throttledAfter{after: time.Hour}},
	{"next permit", []retry.Option{retry.Delay(time.Millisecond), retry.WaitForPermit(true)},
		&throttled{id: "rl", next: time.Hour, ok: true}},
}

// A wait that would end after the caller's deadline is not started: the retry stops at
// once and returns the last attempt's error as is, publishes RetryAborted (no
// RetryAttempt) and records the call as aborted; no timer is armed.
func TestCO10_NoWaitPastTheDeadline(t *testing.T) {
	for _, tc := range deadlineCases {
		for _, isAsync := range []bool{false, true} {
			name := tc.name + "/sync"
			if isAsync {
				name = tc.name + "/async"
			}
			t.Run(name, func(t *testing.T) {
				clk := clock.NewManual()
				ev := &events{}
				r, obs := observedRetry(t, clk, append(tc.opts, retry.OnEvent(ev.listen), retry.MaxAttempts(3))...)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				calls := 0
				var err error
				if isAsync {
					f := retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] {
						calls++
						return async.Failed[int](tc.err)
					})(ctx, struct{}{})
					assert.Equal(t, 0, clk.PendingTasks(), "no timer is armed")
					_, err = settled(t, f)
				} else {
					_, err = retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) {
						calls++
						return 0, tc.err
					})(ctx, struct{}{})
				}
				require.Equal(t, tc.err, err, "the last attempt's error, as is")
				assert.NoError(t, ctx.Err(), "the call returned before its deadline")
				assert.Equal(t, 1, calls)
				assert.Equal(t, time.Duration(0), clk.Now(), "no wait was slept")
				got := ev.get()
				require.Len(t, got, 1)
				assert.Equal(t, retry.EventAborted, got[0].Kind)
				assert.Equal(t, 1, got[0].Attempt)
				assert.Equal(t, err, got[0].Err)
				contracttest.RequireOutcomes(t, obs, observe.Outcome{Result: observe.ResultAborted, Attempts: 1, Err: tc.err})
			})
		}
	}
}

// A wait that ends before the deadline is waited, and the next attempt made; the check
// is made before each wait, so the retries stop at the first wait that would end after
// the deadline (CO-10). A result that RetryIf retries is returned as it is, with its nil
// error.
func TestCO10_WaitsThatEndBeforeTheDeadlineAreWaited(t *testing.T) {
	for _, isAsync := range []bool{false, true} {
		t.Run(map[bool]string{false: "sync", true: "async"}[isAsync], func(t *testing.T) {
			clk := clock.NewManual()
			// Waits of 1s, 2s, 4s, 8s; a deadline a minute away in real time. With the
			// manual clock the waits are virtual, and are compared with the real time left:
			// a multiplier that makes the fourth wait an hour stops the call there.
			r := newRetry(t, retry.WithClock(clk), retry.Delay(time.Second), retry.Multiplier(60), retry.MaxAttempts(5))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var times []time.Duration
			var err error
			if isAsync {
				f := retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] {
					times = append(times, clk.Now())
					return async.Failed[int](errBoom)
				})(ctx, struct{}{})
				clk.Advance(time.Second)
				_, err = settled(t, f)
			} else {
				_, err = retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) {
					times = append(times, clk.Now())
					return 0, errBoom
				})(ctx, struct{}{})
			}
			// 1s is waited; the next wait, 60s, ends after the deadline (a minute less the
			// time the test has taken).
			require.Equal(t, errBoom, err)
			assert.Equal(t, []time.Duration{0, time.Second}, times)
		})
	}

	for _, isAsync := range []bool{false, true} {
		clk := clock.NewManual()
		ev := &events{}
		r, obs := observedRetry(t, clk, retry.Delay(time.Hour), retry.OnEvent(ev.listen),
			retry.If(func(v int, _ error) bool { return v < 0 }))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		var v int
		var err error
		if isAsync {
			v, err = settled(t, retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] {
				return async.Completed(-1)
			})(ctx, struct{}{}))
		} else {
			v, err = retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) { return -1, nil })(ctx, struct{}{})
		}
		cancel()
		require.NoError(t, err)
		assert.Equal(t, -1, v, "the last result, as is")
		assert.Equal(t, time.Duration(0), clk.Now())
		assert.Empty(t, ev.get(), "a result with a nil error publishes nothing, as when the attempts run out")
		contracttest.RequireOutcomes(t, obs, observe.Outcome{Result: observe.ResultAborted, Attempts: 1})
	}
}
