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
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/nextpermit"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/retry"
)

// throttled stands for a rate limiter's rejection (nextpermit.Error): limiter id refused
// the call, and its next permit is next away (ok false: it cannot tell).
type throttled struct {
	id   string
	next time.Duration
	ok   bool
}

func (e *throttled) Error() string                  { return "throttled by " + e.id }
func (e *throttled) InstanceID() string             { return e.id }
func (e *throttled) RetryIn() (time.Duration, bool) { return e.next, e.ok }

var _ nextpermit.Error = (*throttled)(nil)

// throttledAfter is both a rate limiter's rejection and an error that sets its own wait.
type throttledAfter struct {
	throttled
	after time.Duration
}

func (e *throttledAfter) RetryAfter() (time.Duration, bool) { return e.after, true }

// secondAttemptAt runs one call through r (sync or async) whose first attempt fails with
// err and whose second succeeds, and returns when the second attempt started, on clk, and
// the Wait of the RetryAttempt event.
func secondAttemptAt(t *testing.T, isAsync bool, clk *clock.Manual, r *retry.Retry, rec *contracttest.Recorder, err error) (time.Duration, time.Duration) {
	t.Helper()
	var times []time.Duration
	outcome := func() error {
		times = append(times, clk.Now())
		if len(times) == 1 {
			return err
		}
		return nil
	}
	start := clk.Now()
	if isAsync {
		f := retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] {
			if e := outcome(); e != nil {
				return async.Failed[int](e)
			}
			return async.Completed(1)
		})(context.Background(), struct{}{})
		clk.Advance(time.Hour)
		_, e := settled(t, f)
		require.NoError(t, e)
	} else {
		_, e := retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) {
			return 1, outcome()
		})(context.Background(), struct{}{})
		require.NoError(t, e)
	}
	require.Len(t, times, 2)
	waits := rec.Of(retry.EventAttempt)
	require.Len(t, waits, 1)
	return times[1] - start, waits[0].Wait
}

// With WaitForPermit, the wait after a rate limiter's rejection is max(the retry's own
// wait, the time until the limiter's next permit); without it, or for a rejection that
// cannot tell, or from a limiter the retry is not bound to, the wait is the retry's own.
// An error that sets its own wait (policy.RetryAfter) keeps it.
func TestWaitForPermit_WaitsUntilTheNextPermit(t *testing.T) {
	const delay = 100 * time.Millisecond
	second := time.Second
	api := &throttled{id: "api", next: second, ok: true}
	for _, tc := range []struct {
		name  string
		on    bool
		src   *retry.PermitSource // nil: the retry as New returns it
		err   error
		jit   float64
		want  time.Duration
		exact bool // the wait is exactly want (false: within the jitter of the delay)
	}{
		{name: "off", err: api, want: delay, exact: true},
		{name: "on", on: true, err: api, want: second, exact: true},
		{name: "on, wrapped", on: true, err: fmt.Errorf("attempt: %w", api), want: second, exact: true},
		{name: "on, permit sooner than the delay", on: true, err: &throttled{id: "api", next: 30 * time.Millisecond, ok: true}, want: delay, exact: true},
		{name: "on, permit due now", on: true, err: &throttled{id: "api", ok: true}, want: delay, exact: true},
		{name: "on, cannot tell", on: true, err: &throttled{id: "api", next: second}, want: delay, exact: true},
		{name: "on, jittered delay below the permit", on: true, jit: 0.5, err: api, want: second, exact: true},
		{name: "on, another error", on: true, err: errBoom, want: delay, exact: true},
		{name: "on, RetryAfter wins", on: true, err: &throttledAfter{throttled: *api, after: 3 * time.Second}, want: 3 * time.Second, exact: true},
		{name: "on, bound to its limiter", on: true, src: &retry.PermitSource{Limiter: "api"}, err: api, want: second, exact: true},
		{name: "on, bound to another limiter", on: true, src: &retry.PermitSource{Limiter: "db"}, err: api, want: delay, exact: true},
		{name: "on, bound to no limiter", on: true, src: &retry.PermitSource{}, err: api, want: delay, exact: true},
		{name: "off, bound always", src: &retry.PermitSource{Limiter: "api", Always: true}, err: api, want: second, exact: true},
		{name: "off, bound always to another limiter", src: &retry.PermitSource{Limiter: "db", Always: true}, err: api, want: delay, exact: true},
		{name: "off, jittered", jit: 0.5, err: api, want: delay},
	} {
		for _, isAsync := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/async=%v", tc.name, isAsync), func(t *testing.T) {
				clk := clock.NewManual()
				rec := &contracttest.Recorder{}
				r := newRetry(t, retry.WithClock(clk), retry.MaxAttempts(3), retry.Delay(delay), retry.Jitter(tc.jit),
					retry.WaitForPermit(tc.on), retry.OnEvent(rec.Listen))
				if tc.src != nil {
					r = r.PermitsFrom(*tc.src)
				}
				at, wait := secondAttemptAt(t, isAsync, clk, r, rec, tc.err)
				assert.Equal(t, wait, at, "the second attempt starts when the event said")
				if tc.exact {
					assert.Equal(t, tc.want, at)
				} else {
					assert.InDelta(t, float64(tc.want), float64(at), float64(tc.want)/2)
				}
			})
		}
	}
}

// A retry that keeps being refused waits for the next permit before each attempt, with
// each wait read from the rejection as that wait starts, and still gives up after
// MaxAttempts.
func TestWaitForPermit_EachWaitReadsTheRejection(t *testing.T) {
	clk := clock.NewManual()
	rec := &contracttest.Recorder{}
	r := newRetry(t, retry.WithClock(clk), retry.MaxAttempts(3), retry.Delay(100*time.Millisecond),
		retry.WaitForPermit(true), retry.OnEvent(rec.Listen))
	rej := &throttled{id: "api", ok: true}
	var times []time.Duration
	_, err := retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) {
		times = append(times, clk.Now())
		rej.next = time.Duration(len(times)) * time.Second // 1s, then 2s, then 3s
		return 0, rej
	})(context.Background(), struct{}{})
	require.Same(t, rej, err, "exhausted: the last rejection, as is")
	assert.Equal(t, []time.Duration{0, time.Second, 3 * time.Second}, times)
	assert.Equal(t, []policy.EventKind{retry.EventAttempt, retry.EventAttempt, retry.EventExhausted}, rec.Kinds())
}

// A retry bound with PermitsFrom is the same retry: one instance id, one configuration,
// one set of events; the retry it was made from is unchanged, and a change made through
// either is seen by both.
func TestPermitsFrom_SharesTheRetry(t *testing.T) {
	clk := clock.NewManual()
	rec := &contracttest.Recorder{}
	r := newRetry(t, retry.WithClock(clk), retry.Name("shared"), retry.Delay(100*time.Millisecond),
		retry.WaitForPermit(true), retry.OnEvent(rec.Listen))
	bound := r.PermitsFrom(retry.PermitSource{Limiter: "db"})
	require.NotSame(t, r, bound)
	assert.Equal(t, "shared", bound.InstanceID())
	assert.Equal(t, r.Config(), bound.Config())
	assert.Same(t, r.Clock(), bound.Clock())

	api := &throttled{id: "api", next: time.Second, ok: true}
	at, _ := secondAttemptAt(t, false, clk, bound, rec, api)
	assert.Equal(t, 100*time.Millisecond, at, "bound to db: api's rejection waits the delay")
	rec2 := &contracttest.Recorder{}
	r2 := newRetry(t, retry.WithClock(clk), retry.Delay(100*time.Millisecond), retry.WaitForPermit(true), retry.OnEvent(rec2.Listen))
	at, _ = secondAttemptAt(t, false, clk, r2.PermitsFrom(retry.PermitSource{Limiter: "db"}).PermitsFrom(retry.PermitSource{Limiter: "api"}), rec2, api)
	assert.Equal(t, time.Second, at, "a later PermitsFrom replaces the binding")

	c := r.Config()
	c.WaitForPermit = false
	require.NoError(t, bound.Reconfigure(c))
	assert.False(t, r.Config().WaitForPermit, "a change through the bound retry is the retry's")
	changes := rec.Of(policy.ConfigChanged)
	require.Len(t, changes, 1)
	assert.Equal(t, "shared", changes[0].Instance)
}

// A Retry not built by New decorates calls as a single attempt, and PermitsFrom keeps it
// so; it has no configuration to change.
func TestZeroRetry(t *testing.T) {
	for _, r := range []*retry.Retry{nil, {}, new(retry.Retry).PermitsFrom(retry.PermitSource{Always: true})} {
		calls := 0
		_, err := retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) { calls++; return 0, errBoom })(context.Background(), struct{}{})
		assert.Same(t, errBoom, err)
		f := retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] { calls++; return async.Failed[int](errBoom) })(context.Background(), struct{}{})
		_, err = settled(t, f)
		assert.Same(t, errBoom, err)
		assert.Equal(t, 2, calls)
		assert.Empty(t, r.InstanceID())
		assert.Zero(t, r.Config())
		assert.Nil(t, r.Clock())
		assert.False(t, r.Retryable(errBoom))
		assert.Equal(t, r4c.BadSpec, r4c.CodeOf(r.Reconfigure(retry.DefaultConfig())))
		assert.Equal(t, r4c.BadSpec, r4c.CodeOf(r.CheckReconfigure(retry.DefaultConfig())))
	}
}

// Waiting for the permit allocates nothing: a call refused twice by its limiter, then
// admitted, on a manual clock.
func TestWaitForPermit_Allocations(t *testing.T) {
	clk := clock.NewManual()
	r := newRetry(t, retry.WithClock(clk), retry.WaitForPermit(true), retry.OnEvent(func(policy.Event) {}))
	rej := &throttled{id: "api", next: time.Second, ok: true}
	for _, rr := range []*retry.Retry{r, r.PermitsFrom(retry.PermitSource{Limiter: "api"})} {
		n := 0
		call := retry.DecorateFunc(rr, func(context.Context, struct{}) (int, error) {
			n++
			if n%3 != 0 {
				return 0, rej
			}
			return 1, nil
		})
		ctx := context.Background()
		before := clk.Now()
		_, err := call(ctx, struct{}{})
		require.NoError(t, err)
		require.Equal(t, 2*time.Second, clk.Now()-before, "waited for the permit twice")
		assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = call(ctx, struct{}{}) }))
	}
}
