package timeout_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/timeout"
)

func configChanged(rec *recorder) []policy.Event {
	var out []policy.Event
	for _, e := range rec.events {
		if e.Kind == policy.ConfigChanged {
			out = append(out, e)
		}
	}
	return out
}

// SPEC RC-1: a new Duration bounds the calls that start after Reconfigure; a call running
// as it changes keeps the deadline, and the error, it started with.
func TestReconfigure_RC1_DurationFromNextCallSync(t *testing.T) {
	to, clk, rec := newManual(t, 500*time.Millisecond)
	before := to.Err()
	first := true
	call := timeout.DecorateFunc(to, func(ctx context.Context, _ struct{}) (string, error) {
		if first {
			first = false
			require.NoError(t, to.Reconfigure(timeout.Config{Duration: time.Second}))
		}
		_ = clk.Sleep(ctx, 600*time.Millisecond)
		return "ok", nil
	})

	_, err := call(context.Background(), struct{}{})
	requireTimeoutError(t, err)
	assert.Same(t, before, err, "the running call keeps its error")
	assert.Equal(t, 500*time.Millisecond, err.(*timeout.Error).Duration())

	got, err := call(context.Background(), struct{}{})
	require.NoError(t, err, "600ms is in time under the new 1s")
	assert.Equal(t, "ok", got)
	assert.Equal(t, timeout.Config{Duration: time.Second}, to.Config())

	exceeded := rec.events[len(rec.events)-2:]
	assert.Equal(t, policy.ConfigChanged, exceeded[0].Kind)
	assert.Equal(t, timeout.EventExceeded, exceeded[1].Kind)
	assert.Equal(t, 500*time.Millisecond, exceeded[1].Attr("timeout").Duration(), "the event gives the time the call was given")
	assert.Same(t, before, exceeded[1].Err)

	// The new error names the new duration; it is made once, not per call.
	late := timeout.DecorateFunc(to, func(ctx context.Context, _ struct{}) (string, error) {
		clk.Advance(2 * time.Second)
		return "", nil
	})
	_, err = late(context.Background(), struct{}{})
	requireTimeoutError(t, err)
	assert.Same(t, to.Err(), err)
	assert.NotSame(t, before, err)
	assert.Equal(t, `timeout: call to "Svc.Call" timed out after 1s`, err.Error())
	_, err2 := late(context.Background(), struct{}{})
	assert.Same(t, err, err2)
}

// SPEC RC-1, asynchronous calls: the call started before the change times out at its own
// deadline, the one started after at the new one.
func TestReconfigure_RC1_DurationFromNextCallAsync(t *testing.T) {
	to, clk, rec := newManual(t, 500*time.Millisecond)
	calls := contracttest.NewCalls()
	call := timeout.DecorateAsyncFunc(to, calls.Next)

	f1 := call(context.Background(), 1)
	require.NoError(t, to.Reconfigure(timeout.Config{Duration: time.Second}))
	f2 := call(context.Background(), 2)

	clk.Advance(500 * time.Millisecond)
	_, err := requireDone(t, f1)
	requireTimeoutError(t, err)
	assert.Equal(t, 500*time.Millisecond, err.(*timeout.Error).Duration())
	requirePending(t, f2)

	clk.Advance(500 * time.Millisecond)
	_, err = requireDone(t, f2)
	requireTimeoutError(t, err)
	assert.Equal(t, time.Second, err.(*timeout.Error).Duration())
	assert.Same(t, to.Err(), err)

	var timeouts []time.Duration
	for _, e := range rec.events {
		if e.Kind == timeout.EventExceeded {
			timeouts = append(timeouts, e.Attr("timeout").Duration())
		}
	}
	assert.Equal(t, []time.Duration{500 * time.Millisecond, time.Second}, timeouts)
	assert.Zero(t, clk.PendingTasks())
}

// SPEC RC-1: enabled changes live. A call that starts while the timeout is disabled runs
// without a deadline; one running as it is disabled keeps its deadline; enabling it again
// bounds the next call.
func TestReconfigure_RC1_EnabledLive(t *testing.T) {
	to, clk, rec := newManual(t, 500*time.Millisecond)
	var hadDeadline []bool
	call := timeout.DecorateFunc(to, func(ctx context.Context, reconf *timeout.Config) (string, error) {
		_, has := ctx.Deadline()
		hadDeadline = append(hadDeadline, has)
		if reconf != nil {
			require.NoError(t, to.Reconfigure(*reconf))
		}
		_ = clk.Sleep(ctx, time.Second)
		return "ok", nil
	})

	_, err := call(context.Background(), &timeout.Config{Duration: 500 * time.Millisecond, Disabled: true})
	requireTimeoutError(t, err)

	got, err := call(context.Background(), nil)
	require.NoError(t, err, "disabled: no deadline")
	assert.Equal(t, "ok", got)

	require.NoError(t, to.Reconfigure(timeout.Config{Duration: 500 * time.Millisecond}))
	_, err = call(context.Background(), nil)
	requireTimeoutError(t, err)
	assert.Equal(t, []bool{true, false, true}, hadDeadline)

	// The same for asynchronous calls.
	calls := contracttest.NewCalls()
	acall := timeout.DecorateAsyncFunc(to, calls.Next)
	f1 := acall(context.Background(), 1)
	require.NoError(t, to.Reconfigure(timeout.Config{Duration: 500 * time.Millisecond, Disabled: true}))
	f2 := acall(context.Background(), 2)
	assert.Same(t, calls.Future(2), f2, "disabled: next's own future")
	clk.Advance(time.Second)
	_, err = requireDone(t, f1)
	requireTimeoutError(t, err)
	requirePending(t, f2)
	calls.Finish(2)
	v, err := requireDone(t, f2)
	require.NoError(t, err)
	assert.Equal(t, "done", v)

	nilNext := timeout.DecorateAsyncFunc(to, func(context.Context, int) *async.Future[string] { return nil })
	_, err = requireDone(t, nilNext(context.Background(), 3))
	assert.ErrorIs(t, err, async.ErrNilFuture, "disabled: a nil future is a failed one")

	var changed [][]string
	for _, e := range configChanged(rec) {
		changed = append(changed, e.Changed)
	}
	assert.Equal(t, [][]string{{"enabled"}, {"enabled"}, {"enabled"}}, changed)
}

// SPEC RC-2: an invalid configuration is refused with New's code and changes nothing:
// neither the configuration in force, nor the calls, nor the error; no event.
func TestReconfigure_RC2_InvalidChangesNothing(t *testing.T) {
	to, clk, rec := newManual(t, 500*time.Millisecond)
	before := to.Err()
	for _, tc := range []struct {
		c    timeout.Config
		code string
	}{
		{timeout.Config{Duration: -time.Second}, r4c.NegativeDuration},
		{timeout.Config{}, r4c.OutOfRange},
		{timeout.Config{Disabled: true}, r4c.OutOfRange},
	} {
		err := to.Reconfigure(tc.c)
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce, "%+v", tc.c)
		assert.Equal(t, tc.code, ce.Code)
		assert.Equal(t, "timeout.duration", ce.Key)
		_, newErr := timeout.New(tc.c.Duration)
		assert.Equal(t, newErr, err, "the error New returns")
		assert.Equal(t, err, to.CheckReconfigure(tc.c), "CheckReconfigure agrees")
	}
	assert.Equal(t, timeout.Config{Duration: 500 * time.Millisecond}, to.Config())
	assert.Same(t, before, to.Err())
	assert.Empty(t, rec.events)

	call := timeout.DecorateFunc(to, func(ctx context.Context, _ struct{}) (string, error) {
		clk.Advance(time.Second)
		return "", nil
	})
	_, err := call(context.Background(), struct{}{})
	assert.Same(t, before, err, "still 500ms")
}

// SPEC RC-2: CheckReconfigure validates without applying; every setting of a timeout
// changes live, so it never refuses one with R4C-REG-012.
func TestReconfigure_RC2_CheckAppliesNothing(t *testing.T) {
	to, _, rec := newManual(t, 500*time.Millisecond)
	require.NoError(t, to.CheckReconfigure(timeout.Config{Duration: time.Minute, Disabled: true}))
	assert.Equal(t, timeout.Config{Duration: 500 * time.Millisecond}, to.Config())
	assert.Empty(t, rec.events)
}

// SPEC RC-3: ConfigChanged names the attributes that changed, sorted, as the
// configuration keys name them; a configuration equal to the one in force publishes
// nothing and keeps the error.
func TestReconfigure_RC3_EventListsChanges(t *testing.T) {
	to, clk, rec := newManual(t, 500*time.Millisecond)
	clk.Advance(3 * time.Second)
	before := to.Err()

	require.NoError(t, to.Reconfigure(timeout.Config{Duration: 500 * time.Millisecond}))
	assert.Empty(t, rec.events, "nothing changed")
	assert.Same(t, before, to.Err())

	require.NoError(t, to.Reconfigure(timeout.Config{Duration: 500 * time.Millisecond, Disabled: true}))
	assert.Same(t, before, to.Err(), "the same Duration keeps its error")
	require.NoError(t, to.Reconfigure(timeout.Config{Duration: time.Second}))
	require.NoError(t, to.Reconfigure(timeout.Config{Duration: 2 * time.Second, Disabled: true}))
	require.NoError(t, to.Reconfigure(timeout.Config{Duration: 2 * time.Second, Disabled: true}))

	assert.Equal(t, []policy.Event{
		{Kind: policy.ConfigChanged, Instance: "Svc.Call", At: 3 * time.Second, Changed: []string{"enabled"}},
		{Kind: policy.ConfigChanged, Instance: "Svc.Call", At: 3 * time.Second, Changed: []string{"duration", "enabled"}},
		{Kind: policy.ConfigChanged, Instance: "Svc.Call", At: 3 * time.Second, Changed: []string{"duration", "enabled"}},
	}, rec.events)
	assert.Equal(t, timeout.Config{Duration: 2 * time.Second, Disabled: true}, to.Config())
}

// SPEC RC-1 under the race detector: calls and Reconfigures at once. Every call runs
// either without a deadline (disabled) or with one of the configured durations, never a
// mix; the configuration read back is always one that was applied.
func TestReconfigure_RC1_ConcurrentCalls(t *testing.T) {
	rec := &contracttest.Recorder{}
	to, err := timeout.New(time.Hour, timeout.OnEvent(rec.Listen))
	require.NoError(t, err)
	configs := []timeout.Config{{Duration: time.Hour}, {Duration: 2 * time.Hour}, {Duration: time.Hour, Disabled: true}}
	check := func(ctx context.Context) {
		dl, has := ctx.Deadline()
		if !has {
			return
		}
		left := time.Until(dl)
		if left > 2*time.Hour || left < time.Hour-time.Minute {
			t.Errorf("deadline in %v: no configuration gives that", left)
		}
	}
	call := timeout.DecorateFunc(to, func(ctx context.Context, _ int) (int, error) { check(ctx); return 1, nil })
	acall := timeout.DecorateAsyncFunc(to, func(ctx context.Context, _ int) *async.Future[int] {
		check(ctx)
		return async.Completed(1)
	})
	manual, err := timeout.New(time.Hour, timeout.WithClock(clock.NewManual()))
	require.NoError(t, err)
	mcall := timeout.DecorateFunc(manual, func(ctx context.Context, _ int) (int, error) { check(ctx); return 1, nil })

	var wg sync.WaitGroup
	var done atomic.Int64
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				_, err := call(context.Background(), i)
				assert.NoError(t, err)
				_, err = mcall(context.Background(), i)
				assert.NoError(t, err)
				_, err = acall(context.Background(), i).Await(context.Background())
				assert.NoError(t, err)
				done.Add(1)
			}
		})
	}
	n := 0
	for ; n < 300 || done.Load() < 2000; n++ { // calls all along the changes
		c := configs[(n+1)%len(configs)]
		require.NoError(t, to.Reconfigure(c))
		require.NoError(t, manual.Reconfigure(c))
		assert.Contains(t, configs, to.Config())
		assert.Equal(t, c.Duration, to.Err().(*timeout.Error).Duration())
		runtime.Gosched()
	}
	close(stop)
	wg.Wait()
	assert.Equal(t, n, rec.Count(policy.ConfigChanged), "every Reconfigure changed something")
	assert.Zero(t, rec.Count(timeout.EventExceeded))
}
