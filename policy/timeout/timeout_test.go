package timeout_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/timeout"
)

// recorder collects events.
type recorder struct{ events []policy.Event }

func (r *recorder) listen(e policy.Event) { r.events = append(r.events, e) }

func newManual(t *testing.T, d time.Duration, opts ...timeout.Option) (*timeout.Timeout, *clock.Manual, *recorder) {
	t.Helper()
	clk := clock.NewManual()
	rec := &recorder{}
	opts = append([]timeout.Option{timeout.WithClock(clk), timeout.OnEvent(rec.listen),
		timeout.Name("Svc.Call")}, opts...)
	to, err := timeout.New(d, opts...)
	require.NoError(t, err)
	return to, clk, rec
}

func requireTimeoutError(t *testing.T, err error) {
	t.Helper()
	require.ErrorIs(t, err, timeout.ErrTimeout)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var te *timeout.Error
	require.ErrorAs(t, err, &te)
	assert.Contains(t, te.Error(), `"Svc.Call"`, "the message names the timeout")
}

func TestErrTimeoutMatchesDeadlineExceeded(t *testing.T) {
	assert.ErrorIs(t, timeout.ErrTimeout, context.DeadlineExceeded)
	assert.NotErrorIs(t, context.DeadlineExceeded, timeout.ErrTimeout,
		"a caller's own deadline is not this policy's timeout")
}

// A function sleeping 600ms under a 500ms timeout: ErrTimeout, and its context ended at
// the deadline, driven by the manual clock (SPEC CL-2).
func TestSyncTimesOut(t *testing.T) {
	to, clk, rec := newManual(t, 500*time.Millisecond)
	var seen context.Context
	var errAfterSleep error
	call := timeout.DecorateFunc(to, func(ctx context.Context, q string) (string, error) {
		seen = ctx
		require.NoError(t, ctx.Err())
		dl, ok := ctx.Deadline()
		require.True(t, ok)
		assert.WithinDuration(t, time.Now().Add(500*time.Millisecond), dl, 250*time.Millisecond)
		assert.Equal(t, 1, clk.PendingTasks(), "one timer for the deadline")
		_ = clk.Sleep(ctx, 600*time.Millisecond) // the manual clock passes the deadline
		errAfterSleep = ctx.Err()
		return "late " + q, nil // a success, discarded
	})

	got, err := call(context.Background(), "q")
	requireTimeoutError(t, err)
	assert.Empty(t, got, "the function's result is discarded")

	// Its context was done at the deadline: Err is DeadlineExceeded, the cause the policy's error.
	assert.Equal(t, context.DeadlineExceeded, errAfterSleep)
	select {
	case <-seen.Done():
	default:
		t.Fatal("the function's context is not done")
	}
	assert.Equal(t, context.DeadlineExceeded, seen.Err())
	assert.Equal(t, to.Err(), context.Cause(seen))
	assert.Zero(t, clk.PendingTasks())

	require.Len(t, rec.events, 1)
	e := rec.events[0]
	assert.Equal(t, timeout.EventExceeded, e.Kind)
	assert.Equal(t, "Svc.Call", e.Instance)
	assert.Equal(t, 500*time.Millisecond, e.Attr("timeout").Duration(), "Timeout is the time given")
	assert.Zero(t, e.Wait, "the call was not held before it ran")
	assert.Equal(t, 600*time.Millisecond, e.At, "published when the call returned")
	assert.Same(t, to.Err(), e.Err)
}

// A function that returns an error after the deadline also gets ErrTimeout.
func TestSyncTimesOutDiscardsErrors(t *testing.T) {
	to, clk, _ := newManual(t, 500*time.Millisecond)
	boom := errors.New("boom")
	call := timeout.DecorateFunc(to, func(ctx context.Context, _ struct{}) (int, error) {
		clk.Advance(time.Second)
		return 7, boom
	})
	got, err := call(context.Background(), struct{}{})
	requireTimeoutError(t, err)
	assert.NotErrorIs(t, err, boom)
	assert.Zero(t, got)
}

// 100ms under 500ms: the result as is, and the deadline's timer is gone at once (SPEC CL-3).
func TestSyncInTime(t *testing.T) {
	to, clk, rec := newManual(t, 500*time.Millisecond)
	boom := errors.New("boom")
	var seen context.Context
	call := timeout.DecorateFunc(to, func(ctx context.Context, fail bool) (string, error) {
		seen = ctx
		_ = clk.Sleep(ctx, 100*time.Millisecond)
		require.NoError(t, ctx.Err())
		if fail {
			return "partial", boom
		}
		return "ok", nil
	})

	got, err := call(context.Background(), false)
	require.NoError(t, err)
	assert.Equal(t, "ok", got)
	assert.Zero(t, clk.PendingTasks())
	assert.ErrorIs(t, seen.Err(), context.Canceled, "the call's context ends when the call is over")

	got, err = call(context.Background(), true)
	assert.Same(t, boom, err, "an error in time is returned as is")
	assert.Equal(t, "partial", got)
	assert.Zero(t, clk.PendingTasks())

	clk.Advance(time.Hour)
	assert.Empty(t, rec.events)
}

// A function that ignores its context: the caller waits until it returns (Go cannot stop a
// goroutine), then gets ErrTimeout. No goroutine is left behind (TestMain's goleak).
func TestSyncFunctionIgnoringContext(t *testing.T) {
	to, clk, rec := newManual(t, 500*time.Millisecond)
	returned := false
	call := timeout.DecorateFunc(to, func(ctx context.Context, _ struct{}) (string, error) {
		_ = clk.Sleep(context.Background(), 2*time.Second) // never looks at ctx
		returned = true
		return "done", nil
	})
	_, err := call(context.Background(), struct{}{})
	requireTimeoutError(t, err)
	assert.True(t, returned, "the caller waited for the function")
	assert.Equal(t, 2*time.Second, clk.Now())
	assert.Zero(t, clk.PendingTasks())
	require.Len(t, rec.events, 1)
}

// The caller's own cancellation is not a timeout: the function's result is returned as is.
func TestSyncParentCanceledIsNotATimeout(t *testing.T) {
	to, clk, rec := newManual(t, 500*time.Millisecond)
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	call := timeout.DecorateFunc(to, func(ctx context.Context, _ struct{}) (string, error) {
		cancel()
		<-ctx.Done()
		assert.Equal(t, context.Canceled, ctx.Err())
		clk.Advance(time.Second) // the deadline passes too, after the cancellation
		assert.Equal(t, context.Canceled, ctx.Err())
		return "", ctx.Err()
	})
	_, err := call(parent, struct{}{})
	assert.Equal(t, context.Canceled, err)
	assert.NotErrorIs(t, err, timeout.ErrTimeout)
	assert.Empty(t, rec.events)
	assert.Zero(t, clk.PendingTasks())
}

// An earlier deadline of the caller's context is what the function sees.
func TestSyncParentDeadlineEarlier(t *testing.T) {
	to, _, _ := newManual(t, time.Hour)
	want := time.Now().Add(time.Minute)
	parent, cancel := context.WithDeadline(context.Background(), want)
	defer cancel()
	call := timeout.DecorateFunc(to, func(ctx context.Context, _ struct{}) (time.Time, error) {
		dl, _ := ctx.Deadline()
		return dl, nil
	})
	dl, err := call(parent, struct{}{})
	require.NoError(t, err)
	assert.Equal(t, want, dl)
}

// Values of the caller's context pass through.
func TestSyncContextValues(t *testing.T) {
	type key struct{}
	to, _, _ := newManual(t, time.Second)
	call := timeout.DecorateFunc(to, func(ctx context.Context, _ struct{}) (any, error) {
		return ctx.Value(key{}), nil
	})
	v, err := call(context.WithValue(context.Background(), key{}, "v"), struct{}{})
	require.NoError(t, err)
	assert.Equal(t, "v", v)
}

func TestSyncDisabled(t *testing.T) {
	to, clk, rec := newManual(t, 500*time.Millisecond, timeout.Enabled(false))
	call := timeout.DecorateFunc(to, func(ctx context.Context, _ struct{}) (string, error) {
		_, has := ctx.Deadline()
		assert.False(t, has)
		assert.Zero(t, clk.PendingTasks())
		clk.Advance(time.Hour)
		return "ok", ctx.Err()
	})
	got, err := call(context.Background(), struct{}{})
	require.NoError(t, err)
	assert.Equal(t, "ok", got)
	assert.Empty(t, rec.events)
}

// The real deadline path on the System clock, with generous bounds.
func TestSyncSystemClock(t *testing.T) {
	var events []policy.Event
	to, err := timeout.New(20*time.Millisecond, timeout.Name("Svc.Call"),
		timeout.OnEvent(func(e policy.Event) { events = append(events, e) }))
	require.NoError(t, err)
	var childErr, seenErr, cause error
	call := timeout.DecorateFunc(to, func(ctx context.Context, wait bool) (string, error) {
		dl, ok := ctx.Deadline()
		require.True(t, ok)
		assert.WithinDuration(t, time.Now().Add(20*time.Millisecond), dl, time.Second)
		if !wait {
			return "fast", nil
		}
		child, cancel := context.WithCancel(ctx)
		defer cancel()
		select {
		case <-child.Done():
		case <-time.After(10 * time.Second):
			t.Error("the deadline never came")
		}
		childErr, seenErr, cause = child.Err(), ctx.Err(), context.Cause(ctx)
		return "late", nil
	})

	start := time.Now()
	_, err = call(context.Background(), true)
	elapsed := time.Since(start)
	requireTimeoutError(t, err)
	assert.GreaterOrEqual(t, elapsed, 20*time.Millisecond)
	assert.Less(t, elapsed, 5*time.Second)
	assert.Equal(t, context.DeadlineExceeded, seenErr)
	assert.Equal(t, context.DeadlineExceeded, childErr)
	assert.Equal(t, to.Err(), cause)
	require.Len(t, events, 1)
	assert.Equal(t, 20*time.Millisecond, events[0].Attr("timeout").Duration())
	assert.Zero(t, events[0].Wait)

	got, err := call(context.Background(), false)
	require.NoError(t, err)
	assert.Equal(t, "fast", got)
	require.Len(t, events, 1)
}

// On the System clock the caller's own deadline is not a timeout either.
func TestSyncSystemParentDeadline(t *testing.T) {
	to, err := timeout.New(time.Hour)
	require.NoError(t, err)
	parent, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	call := timeout.DecorateFunc(to, func(ctx context.Context, _ struct{}) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	_, err = call(parent, struct{}{})
	assert.Equal(t, context.DeadlineExceeded, err)
	assert.NotErrorIs(t, err, timeout.ErrTimeout)
}

func TestNewPolicy(t *testing.T) {
	to, clk, _ := newManual(t, 500*time.Millisecond)
	p := timeout.NewPolicy[string](to)
	assert.Equal(t, timeout.Layer, p.Layer())

	call := p.Decorate(func(ctx context.Context) (string, error) {
		clk.Advance(time.Second)
		return "late", nil
	})
	_, err := call(context.Background())
	requireTimeoutError(t, err)

	acall := p.DecorateAsync(func(ctx context.Context) *asyncFuture {
		return completedString("now")
	})
	got, err := acall(context.Background()).Await(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "now", got)
	assert.Zero(t, clk.PendingTasks())
}

// neverAgain is an error that no retry may retry.
type neverAgain struct{}

func (neverAgain) Error() string      { return "sent already" }
func (neverAgain) NeverRetried() bool { return true }

// A synchronous call that runs past its deadline fails with an error that no retry
// retries (a policy.NeverRetried wrapping the *Error) when the function's own error says
// so, and with the plain *Error otherwise; both match ErrTimeout, on the manual clock and
// on the system clock.
func TestTimedOutCallKeepsTheFunctionsNeverRetried(t *testing.T) {
	for _, clk := range []clock.Clock{clock.NewManual(), clock.System()} {
		to, err := timeout.New(10*time.Millisecond, timeout.WithClock(clk))
		require.NoError(t, err)
		for _, tc := range []struct {
			inner error
			never bool
		}{{neverAgain{}, true}, {fmt.Errorf("wrapped: %w", neverAgain{}), true}, {errors.New("plain"), false}, {nil, false}} {
			call := timeout.DecorateFunc(to, func(ctx context.Context, _ struct{}) (int, error) {
				if m, ok := clk.(*clock.Manual); ok {
					m.Advance(10 * time.Millisecond)
				}
				<-ctx.Done()
				return 1, tc.inner
			})
			_, err := call(context.Background(), struct{}{})
			require.ErrorIs(t, err, timeout.ErrTimeout)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			te, ok := errors.AsType[*timeout.Error](err)
			require.True(t, ok)
			assert.Same(t, to.Err(), te, "the timeout's own error")
			assert.Equal(t, to.Err().Error(), err.Error())
			nr, ok := errors.AsType[policy.NeverRetried](err)
			assert.Equal(t, tc.never, ok && nr.NeverRetried(), "%v", tc.inner)
		}
	}
}
