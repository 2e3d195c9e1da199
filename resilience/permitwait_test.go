package resilience_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/nextpermit"
	"github.com/resilience4go/resilience4go/internal/permitwait"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// permitFixture is a registry on a manual clock whose events are recorded, and a function
// that records when it runs.
type permitFixture struct {
	reg   *resilience.Registry
	clk   *clock.Manual
	rec   *contracttest.Recorder
	times []time.Duration // when fn ran
	err   error           // what fn returns; nil: success
}

func newPermitFixture(t *testing.T, opts ...resilience.RegistryOption) *permitFixture {
	t.Helper()
	f := &permitFixture{rec: &contracttest.Recorder{}}
	f.reg, f.clk = newRegistry(t, append([]resilience.RegistryOption{resilience.WithEventListener(f.rec.Listen)}, opts...)...)
	return f
}

func (f *permitFixture) fn(context.Context) (int, error) {
	f.times = append(f.times, f.clk.Now())
	if f.err != nil {
		return 0, f.err
	}
	return 1, nil
}

// spend takes the one permit of the rate limiter id, so that the next is a period away.
func (f *permitFixture) spend(t *testing.T, id string) {
	t.Helper()
	l, err := resilience.Lookup[*ratelimit.Limiter](f.reg, ratelimit.Layer, id)
	require.NoError(t, err)
	require.True(t, l.TryAcquire())
	require.Zero(t, l.Snapshot().AvailablePermits)
}

// at returns the clock times of the events of kind k.
func (f *permitFixture) at(k policy.EventKind) []time.Duration {
	var out []time.Duration
	for _, e := range f.rec.Of(k) {
		out = append(out, e.At)
	}
	return out
}

// A retry (delay 100ms, 3 attempts, waitForPermit) around a rate limiter of 1 permit per
// second whose permit was just taken: the first attempt is refused, and the second runs
// at exactly 1s, when the permit is due, and succeeds; it does not run at 100ms to be
// refused again. Without waitForPermit the second attempt runs at 100ms, and all three
// are refused.
func TestWaitForPermit_SecondAttemptRunsWhenThePermitIsDue(t *testing.T) {
	for _, on := range []bool{true, false} {
		for _, isAsync := range []bool{false, true} {
			t.Run(fmt.Sprintf("waitForPermit=%v/async=%v", on, isAsync), func(t *testing.T) {
				f := newPermitFixture(t)
				specs := []resilience.Spec{
					resilience.Retry(retry.Delay(100*time.Millisecond), retry.MaxAttempts(3), retry.WaitForPermit(on)),
					resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)),
				}
				var call func(context.Context) (int, error)
				if isAsync {
					acall, err := resilience.WrapAsync(f.reg, "api", func(ctx context.Context) *async.Future[int] {
						v, err := f.fn(ctx)
						if err != nil {
							return async.Failed[int](err)
						}
						return async.Completed(v)
					}, specs...)
					require.NoError(t, err)
					call = func(ctx context.Context) (int, error) {
						fut := acall(ctx)
						f.clk.Advance(time.Hour)
						v, done, err := fut.Result()
						require.True(t, done)
						return v, err
					}
				} else {
					var err error
					call, err = resilience.Wrap(f.reg, "api", f.fn, specs...)
					require.NoError(t, err)
				}
				f.spend(t, "api")

				_, err := call(context.Background())
				attempts := f.rec.Of(retry.EventAttempt)
				if on {
					require.NoError(t, err)
					assert.Equal(t, []time.Duration{time.Second}, f.times, "the second attempt runs at exactly 1s")
					assert.Equal(t, []time.Duration{0}, f.at(ratelimit.EventRejected), "one attempt refused, none wasted")
					require.Len(t, attempts, 1)
					assert.Equal(t, time.Second, attempts[0].Wait)
					assert.ErrorIs(t, attempts[0].Err, ratelimit.ErrExceeded)
					return
				}
				require.ErrorIs(t, err, ratelimit.ErrExceeded)
				assert.Empty(t, f.times, "every attempt refused")
				assert.Equal(t, []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond}, f.at(ratelimit.EventRejected),
					"the second attempt runs at 100ms, the third at 200ms")
				require.Len(t, attempts, 2)
				assert.Equal(t, 100*time.Millisecond, attempts[0].Wait)
			})
		}
	}
}

// The rejection a retry gives up on is the limiter's *ratelimit.ExceededError, found with
// errors.As through the composition, and its RetryIn reads the limiter live; reading
// it allocates nothing.
func TestWaitForPermit_RejectionThroughTheComposition(t *testing.T) {
	f := newPermitFixture(t)
	call, err := resilience.Wrap(f.reg, "api", f.fn,
		resilience.Retry(retry.Delay(100*time.Millisecond), retry.MaxAttempts(3)),
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)))
	require.NoError(t, err)
	f.spend(t, "api")
	_, err = call(context.Background())
	require.ErrorIs(t, err, ratelimit.ErrExceeded)

	e, ok := errors.AsType[*ratelimit.ExceededError](err)
	require.True(t, ok)
	assert.Equal(t, "api", e.InstanceID())
	next, ok := e.RetryIn()
	require.True(t, ok)
	assert.Equal(t, 800*time.Millisecond, next, "at 200ms, the permit is due at 1s")
	th, ok := errors.AsType[nextpermit.Error](err)
	require.True(t, ok)
	assert.Same(t, e, th)
	var as *ratelimit.ExceededError
	require.ErrorAs(t, err, &as)
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		e, _ := errors.AsType[*ratelimit.ExceededError](err)
		next, _ = e.RetryIn()
	}))
	f.clk.Advance(300 * time.Millisecond)
	next, _ = e.RetryIn()
	assert.Equal(t, 500*time.Millisecond, next, "read live")
}

// The key retry.waitForPermit turns it on, as the option does; a Reload changes it for
// the compositions' next calls.
func TestWaitForPermit_KeyAndLiveChange(t *testing.T) {
	f := newPermitFixture(t, resilience.WithProperties(map[string]string{"instances.api.retry.waitForPermit": "true"}))
	call, err := resilience.Wrap(f.reg, "api", f.fn,
		resilience.Retry(retry.Delay(100*time.Millisecond), retry.MaxAttempts(3)),
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)))
	require.NoError(t, err)
	r, err := resilience.Lookup[*retry.Retry](f.reg, retry.Layer, "api")
	require.NoError(t, err)
	assert.True(t, r.Config().WaitForPermit)

	f.spend(t, "api")
	start := f.clk.Now()
	_, err = call(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{start + time.Second}, f.times)

	require.NoError(t, f.reg.Reload(map[string]string{"instances.api.retry.waitForPermit": "false"}))
	assert.False(t, r.Config().WaitForPermit)
	f.times = nil
	start = f.clk.Now() // the permit was taken now by the call before: the next is 1s away
	_, err = call(context.Background())
	require.ErrorIs(t, err, ratelimit.ErrExceeded, "off: three attempts 100ms apart, all refused")
	assert.Empty(t, f.times)
	assert.Equal(t, start+200*time.Millisecond, f.clk.Now())
	changed := f.rec.Of(policy.ConfigChanged)
	require.Len(t, changed, 1)
	assert.Equal(t, []string{"waitForPermit"}, changed[0].Changed)
}

// A retry in a composition waits only for its own composition's rate limiter: the
// rejection of another limiter (one the wrapped function calls through) is retried after
// the retry's delay, in a composition with a rate limiter and in one without.
func TestWaitForPermit_OnlyTheCompositionsLimiter(t *testing.T) {
	for _, withLimiter := range []bool{true, false} {
		t.Run(fmt.Sprintf("limiter=%v", withLimiter), func(t *testing.T) {
			f := newPermitFixture(t)
			db, err := ratelimit.New(ratelimit.Name("db"), ratelimit.Permits(1), ratelimit.Period(time.Hour),
				ratelimit.WithClock(f.clk))
			require.NoError(t, err)
			require.True(t, db.TryAcquire())
			f.err = db.TryAcquireN(1) // the db limiter's rejection, an hour from its permit
			require.ErrorIs(t, f.err, ratelimit.ErrExceeded)
			specs := []resilience.Spec{resilience.Retry(retry.Delay(100*time.Millisecond), retry.MaxAttempts(2), retry.WaitForPermit(true))}
			if withLimiter {
				specs = append(specs, resilience.RateLimiter(ratelimit.Permits(10), ratelimit.Period(time.Second)))
			}
			call, err := resilience.Wrap(f.reg, "api", f.fn, specs...)
			require.NoError(t, err)
			_, err = call(context.Background())
			require.ErrorIs(t, err, ratelimit.ErrExceeded)
			assert.Equal(t, []time.Duration{0, 100 * time.Millisecond}, f.times, "the db limiter is not the composition's")
		})
	}
}

// One retry shared by name among two compositions, each with its own rate limiter, waits
// in each for that composition's limiter.
func TestWaitForPermit_SharedRetryWaitsForEachCompositionsLimiter(t *testing.T) {
	f := newPermitFixture(t)
	shared := resilience.Retry(retry.Name("shared"), retry.Delay(100*time.Millisecond), retry.MaxAttempts(2), retry.WaitForPermit(true))
	fast, err := resilience.Wrap(f.reg, "fast", f.fn, shared, resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)))
	require.NoError(t, err)
	slow, err := resilience.Wrap(f.reg, "slow", f.fn, shared, resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(3*time.Second)))
	require.NoError(t, err)
	f.spend(t, "fast")
	f.spend(t, "slow")

	_, err = fast(context.Background())
	require.NoError(t, err)
	_, err = slow(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{time.Second, 3 * time.Second}, f.times,
		"fast waited for its permit, due at 1s; slow, then, for its own, due at 3s")
	var waits []time.Duration
	for _, e := range f.rec.Of(retry.EventAttempt) {
		waits = append(waits, e.Wait)
	}
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second}, waits)
	_, err = resilience.Lookup[*retry.Retry](f.reg, retry.Layer, "shared")
	require.NoError(t, err, "one retry, registered under its name")
	for _, e := range f.rec.Of(retry.EventAttempt) {
		assert.Equal(t, "shared", e.Instance)
	}
}

// The spec the client adapters give (permitwait.Spec) makes the composition's retry wait
// for the permit whatever its own setting says; it is no layer (it takes no place in the
// order, may be given twice) and a composition without a retry ignores it.
func TestPermitWaitSpec(t *testing.T) {
	f := newPermitFixture(t)
	spec, ok := permitwait.Spec().(resilience.Spec)
	require.True(t, ok, "set by package resilience")
	call, err := resilience.Wrap(f.reg, "api", f.fn,
		spec,
		resilience.Retry(retry.Delay(100*time.Millisecond), retry.MaxAttempts(3), retry.WaitForPermit(false)),
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)),
		spec,
		resilience.Order(retry.Layer, ratelimit.Layer))
	require.NoError(t, err)
	f.spend(t, "api")
	_, err = call(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{time.Second}, f.times)

	r, err := resilience.Lookup[*retry.Retry](f.reg, retry.Layer, "api")
	require.NoError(t, err)
	assert.False(t, r.Config().WaitForPermit, "the instance's setting is unchanged")

	alone, err := resilience.Wrap(f.reg, "alone", f.fn, spec,
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)))
	require.NoError(t, err)
	_, err = alone(context.Background())
	require.NoError(t, err)
	none, err := resilience.Wrap(f.reg, "none", f.fn, spec)
	require.NoError(t, err)
	_, err = none(context.Background())
	require.NoError(t, err)
}

// Waiting for the permit through a composition allocates no more than the composition
// does without it: none, on a manual clock.
func TestWaitForPermit_CompositionAllocations(t *testing.T) {
	f := newPermitFixture(t)
	call, err := resilience.Wrap(f.reg, "api", func(context.Context) (int, error) { return 1, nil },
		resilience.Retry(retry.Delay(100*time.Millisecond), retry.MaxAttempts(3), retry.WaitForPermit(true)),
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)))
	require.NoError(t, err)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		// The permit of this call is taken by the call before: each call is refused once,
		// waits 1s, and runs.
		_, _ = call(ctx)
		_, _ = call(ctx)
	})
	assert.Zero(t, allocs)
	assert.Positive(t, f.rec.Count(retry.EventAttempt))
}

// A rejection from another limiter that happens to have the composition limiter's id (one
// inside the wrapped function, built on its own) is not the composition's: the retry
// waits its own delay, not that limiter's hour.
func TestWaitForPermit_OtherLimiterWithTheSameID(t *testing.T) {
	f := newPermitFixture(t)
	inner, err := ratelimit.New(ratelimit.Name("api"), ratelimit.Permits(1), ratelimit.Period(time.Hour),
		ratelimit.WithClock(f.clk))
	require.NoError(t, err)
	require.True(t, inner.TryAcquire())
	f.err = inner.TryAcquireN(1)
	require.ErrorIs(t, f.err, ratelimit.ErrExceeded)
	call, err := resilience.Wrap(f.reg, "api", f.fn,
		resilience.Retry(retry.Delay(100*time.Millisecond), retry.MaxAttempts(2), retry.WaitForPermit(true)),
		resilience.RateLimiter(ratelimit.Permits(10), ratelimit.Period(time.Second)))
	require.NoError(t, err)
	_, err = call(context.Background())
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.Equal(t, []time.Duration{0, 100 * time.Millisecond}, f.times)
}
