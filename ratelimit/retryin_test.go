package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/nextpermit"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// SPEC RL-9b: a limiter's preallocated rejection tells, read live from the limiter, how
// long until its next permit: 1 per second, the permit taken at 0; at 1ms the rejection
// says 999ms, and 300ms later 699ms; a freed slot of a canceled reservation counts.
func TestRL9b_RejectionTellsTheNextPermitLive(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(5*time.Second))
	require.True(t, l.TryAcquire())
	clk.AdvanceTo(time.Millisecond)
	require.False(t, l.TryAcquire())
	err := fmt.Errorf("calling the API: %w", l.Rejection())

	e, ok := errors.AsType[*ratelimit.ExceededError](err)
	require.True(t, ok)
	wait, ok := e.RetryIn()
	require.True(t, ok)
	assert.Equal(t, 999*time.Millisecond, wait)
	clk.Advance(300 * time.Millisecond)
	wait, _ = e.RetryIn()
	assert.Equal(t, 699*time.Millisecond, wait)
	th, ok := errors.AsType[nextpermit.Error](err)
	require.True(t, ok, "it is a nextpermit.Error")
	assert.Equal(t, "test", th.InstanceID())
	_, isRetryAfter := errors.AsType[policy.RetryAfter](err)
	assert.False(t, isRetryAfter, "not a policy.RetryAfter: a retry waits for it only when asked")

	// Reservations at 1s, 2s, 3s; the one at 2s is canceled: its slot is the next permit
	// after the one at 1s is taken.
	var rs []ratelimit.Reservation
	for range 3 {
		r, err := l.Reserve()
		require.NoError(t, err)
		rs = append(rs, r)
	}
	rs[1].Cancel()
	clk.AdvanceTo(time.Second)
	wait, _ = e.RetryIn()
	assert.Equal(t, time.Second, wait, "the 2s slot, freed")
	clk.AdvanceTo(2*time.Second + 500*time.Millisecond)
	wait, _ = e.RetryIn()
	assert.Equal(t, 1500*time.Millisecond, wait, "past the freed slot: after the one at 3s")

	clk.AdvanceTo(10 * time.Second)
	wait, _ = e.RetryIn()
	assert.Zero(t, wait, "free now")
}

// SPEC RL-9b: finding the rejection with errors.As and reading its next permit allocates
// nothing. (errors.As needs a pointer to the target, which escapes: a target declared
// anew for each call is itself one 8-byte allocation; errors.AsType has none.)
func TestRL9b_RetryInAllocatesNothing(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second))
	require.True(t, l.TryAcquire())
	err := l.Acquire(t.Context())
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	var sum time.Duration
	var e *ratelimit.ExceededError
	allocs := testing.AllocsPerRun(100, func() {
		if errors.As(err, &e) {
			d, _ := e.RetryIn()
			sum += d
		}
	})
	assert.Zero(t, allocs)
	assert.Equal(t, 100*time.Second+time.Second, sum, "101 runs (one warm-up) of 1s")
	allocs = testing.AllocsPerRun(100, func() {
		if e, ok := errors.AsType[*ratelimit.ExceededError](err); ok {
			d, _ := e.RetryIn()
			sum += d
		}
		if th, ok := errors.AsType[nextpermit.Error](err); ok {
			d, _ := th.RetryIn()
			sum += d
		}
	})
	assert.Zero(t, allocs)
}

// SPEC RL-9b: a keyed limiter's rejection is shared by every key, and cannot tell a key's
// next permit (Decide and Reservation.Delay do); a disabled limiter's permit is free now.
func TestRL9b_RetryInUnknownForKeyed(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[string](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second))
	require.True(t, k.TryAcquire("a", 1) == nil)
	e, ok := errors.AsType[*ratelimit.ExceededError](k.TryAcquire("a", 1))
	require.True(t, ok)
	_, ok = e.RetryIn()
	assert.False(t, ok)
	assert.Equal(t, time.Second, k.Decide(context.Background(), "a").RetryAfter)

	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second))
	require.True(t, l.TryAcquire())
	e, _ = errors.AsType[*ratelimit.ExceededError](l.Rejection())
	cfg := l.Config()
	cfg.Disabled = true
	require.NoError(t, l.Reconfigure(cfg))
	wait, ok := e.RetryIn()
	assert.True(t, ok)
	assert.Zero(t, wait)
}

// The README and the API agree on the retry-after of a rejection: it is RetryIn, which
// returns how long and whether the rejection can tell, the method every refusal of every
// policy has (policy.Rejection), and a retry that waits for the limiter's permit reads it
// (nextpermit.Error). There is no second method for it. (Fault: the README said the
// rejection's NextPermit() returned how long, code written from it did not compile, and
// NextPermit said what RetryIn says.)
func TestExceededError_OneRetryAfter(t *testing.T) {
	l := newLimiter(t, clock.NewManual(), ratelimit.Permits(1), ratelimit.Period(time.Second))
	require.True(t, l.TryAcquire())
	var e any = l.TryAcquireN(1)
	_, isRefuser := e.(policy.Rejection)
	assert.True(t, isRefuser)
	_, isThrottled := e.(nextpermit.Error)
	assert.True(t, isThrottled)
	_, hasNextPermit := e.(interface{ NextPermit() (time.Duration, bool) })
	assert.False(t, hasNextPermit, "RetryIn is the retry-after, once")
}

// A limiter built without a Name has no id, and its errors do not invent one. (Fault: they
// named it "ratelimiter".)
func TestUnnamedLimiterErrorsNameNoLimiter(t *testing.T) {
	l := newUnnamed(t)
	require.True(t, l.TryAcquire())
	err := l.TryAcquireN(1)
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.EqualError(t, err, "ratelimit: rate limit exceeded")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.EqualError(t, l.Acquire(ctx), "ratelimit: rate limit exceeded: context canceled")
	assert.EqualError(t, l.TryAcquireN(2),
		"ratelimit: a call for more than the 1 permits of the rate limiter (its burst) can never be granted")
	e, ok := errors.AsType[*ratelimit.ExceededError](err)
	require.True(t, ok)
	assert.Empty(t, e.InstanceID())
	assert.Empty(t, l.InstanceID())
	assert.Empty(t, l.Snapshot().Instance)

	named, err := ratelimit.New(ratelimit.Name("geo"), ratelimit.Permits(1), ratelimit.Period(time.Hour))
	require.NoError(t, err)
	require.True(t, named.TryAcquire())
	assert.EqualError(t, named.TryAcquireN(1), `ratelimit: rate limit exceeded for "geo"`)
}

// newUnnamed returns a limiter of 1 permit per hour built without a Name.
func newUnnamed(t *testing.T) *ratelimit.Limiter {
	t.Helper()
	l, err := ratelimit.New(ratelimit.Permits(1), ratelimit.Period(time.Hour), ratelimit.WithClock(clock.NewManual()))
	require.NoError(t, err)
	return l
}
