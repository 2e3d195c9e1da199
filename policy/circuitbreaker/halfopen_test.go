package circuitbreaker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/policy"
	cb "github.com/resilience4go/resilience4go/policy/circuitbreaker"
)

// transitionsAt returns the transition events as "FROM→TO@AT".
func (r *recorder) transitionsAt() []string {
	var out []string
	for _, e := range r.all() {
		if e.Kind == cb.EventTransition {
			out = append(out, fmt.Sprintf("%s→%s@%v", e.Attr("from").String(), e.Attr("to").String(), e.At))
		}
	}
	return out
}

// lastRejection returns the last CircuitBreakerRejected event.
func (r *recorder) lastRejection(t *testing.T) policy.Event {
	t.Helper()
	all := r.all()
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Kind == cb.EventRejected {
			return all[i]
		}
	}
	t.Fatal("no rejection event")
	return policy.Event{}
}

// A synchronous trial that never returns does not keep the breaker half-open: after
// MaxWaitInHalfOpen it is open again, and once WaitInOpen has passed a new trial closes
// it; the stuck trial's outcome, when it finally comes, is not recorded (fault: the
// breaker stayed half-open, rejecting every call, for as long as the trial ran).
func TestHalfOpenGivesUpOnStuckTrialSync(t *testing.T) {
	f := openedBreaker(t, 1, cb.MaxWaitInHalfOpen(30*time.Second))
	f.clk.Advance(10 * time.Second)

	entered, release := make(chan struct{}), make(chan error)
	stuck := cb.DecorateFunc(f.b, func(context.Context, struct{}) (string, error) {
		close(entered)
		return "late", <-release
	})
	var wg sync.WaitGroup
	var lateErr error
	wg.Go(func() { _, lateErr = stuck(context.Background(), struct{}{}) })
	<-entered
	require.Equal(t, cb.HalfOpen, f.state())
	assert.Equal(t, cb.HalfOpen, f.rejected().State(), "the one trial is taken")
	assert.Zero(t, f.rec.lastRejection(t).RetryAfter, "half-open: the time until a trial is free is unknown")

	f.clk.Advance(30*time.Second - 1)
	assert.Equal(t, cb.HalfOpen, f.rejected().State(), "still within MaxWaitInHalfOpen")

	f.clk.Advance(1) // 40s: the breaker gives up on the trial
	assert.Equal(t, cb.Open, f.rejected().State())
	require.Equal(t, cb.Open, f.state())
	assert.Equal(t, 10*time.Second, f.rec.lastRejection(t).RetryAfter, "open again for WaitInOpen")

	f.clk.Advance(10*time.Second - 1)
	f.rejected()
	f.clk.Advance(1) // 50s: a new trial passes and closes the breaker
	f.do(ok)
	require.Equal(t, cb.Closed, f.state())

	release <- errBoom // the stuck trial fails at last
	wg.Wait()
	require.ErrorIs(t, lateErr, errBoom, "the caller gets its own outcome")
	require.Equal(t, cb.Closed, f.state())
	assert.Equal(t, 0, f.b.Snapshot().BufferedCalls, "a trial given up on is not recorded")
	assert.Equal(t, []string{"closed→open@0s", "open→half-open@10s", "half-open→open@40s",
		"open→half-open@50s", "half-open→closed@50s"}, f.rec.transitionsAt())
}

// The reproducer: one permitted trial, an async call whose future never completes, and
// a call 24 hours later. The breaker gave up on the trial 60s (the default bound) after
// it went half-open and was open for WaitInOpen after that, so the call 24 hours later is
// a new trial, and its success closes the breaker (fault: every call was still rejected).
func TestHalfOpenGivesUpOnStuckTrialAsync(t *testing.T) {
	a := newAsyncFixture(t, cb.SlidingWindowSize(1), cb.WaitInOpen(10*time.Second), cb.PermittedInHalfOpen(1))
	_, c := a.start()
	c("", errBoom)
	require.Equal(t, cb.Open, a.state())
	a.clk.Advance(10 * time.Second)

	never, c := a.start()
	require.NotNil(t, c, "the trial")
	_, c = a.start()
	require.Nil(t, c, "rejected while the trial runs")

	a.clk.Advance(24 * time.Hour)
	next, c := a.start()
	require.NotNil(t, c, "a new trial 24 hours later")
	require.Equal(t, cb.HalfOpen, a.state())
	c("ok", nil)
	require.Equal(t, cb.Closed, a.state())
	v, err := next.Await(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "ok", v)
	_, done, _ := never.Result()
	assert.False(t, done, "the stuck future is the caller's, untouched")
	assert.Equal(t, []string{"closed→open@0s", "open→half-open@10s", "half-open→open@1m10s",
		"open→half-open@24h0m10s", "half-open→closed@24h0m10s"}, a.rec.transitionsAt())
}

// Outcomes of trials the breaker gave up on are not recorded, in any later state: a late
// failure neither reopens a breaker in its next half-open nor takes or frees one of its
// trial slots; a late success does not close it.
func TestHalfOpenLateOutcomesOfGivenUpTrialsAreIgnored(t *testing.T) {
	a := newAsyncFixture(t, cb.SlidingWindowSize(1), cb.WaitInOpen(10*time.Second), cb.PermittedInHalfOpen(2),
		cb.MaxWaitInHalfOpen(30*time.Second))
	_, c := a.start()
	c("", errBoom)
	a.clk.Advance(10 * time.Second)

	_, first := a.start()
	staleF, stale := a.start()
	a.clk.Advance(5 * time.Second)
	first("ok", nil) // one trial done, the other stuck: no decision
	require.Equal(t, cb.HalfOpen, a.state())

	a.clk.Advance(25 * time.Second) // 40s: given up
	_, c = a.start()
	require.Nil(t, c)
	require.Equal(t, cb.Open, a.state())
	a.clk.Advance(10 * time.Second) // 50s
	_, third := a.start()
	require.NotNil(t, third, "a new half-open")

	stale("", errBoom) // the given-up trial fails now
	require.Equal(t, cb.HalfOpen, a.state(), "a late failure does not reopen")
	assert.Equal(t, 0, a.b.Snapshot().BufferedCalls, "nor is it counted among the new trials")
	_, err := staleF.Await(context.Background())
	require.ErrorIs(t, err, errBoom, "the caller gets its own outcome")

	_, fourth := a.start()
	require.NotNil(t, fourth, "the second slot is still free")
	_, c = a.start()
	require.Nil(t, c, "and then none: the late outcome freed no slot")
	third("ok", nil)
	fourth("ok", nil)
	require.Equal(t, cb.Closed, a.state())

	// A late success of a given-up trial does not close a breaker that opened since.
	b := newAsyncFixture(t, cb.SlidingWindowSize(1), cb.WaitInOpen(10*time.Second), cb.PermittedInHalfOpen(1),
		cb.MaxWaitInHalfOpen(30*time.Second))
	_, c = b.start()
	c("", errBoom)
	b.clk.Advance(10 * time.Second)
	_, late := b.start()
	b.clk.Advance(30 * time.Second)
	_, c = b.start()
	require.Nil(t, c)
	require.Equal(t, cb.Open, b.state())
	late("ok", nil)
	require.Equal(t, cb.Open, b.state(), "a late success does not close")
}

// A trial that completes after MaxWaitInHalfOpen, with no call in between, is not
// recorded either: the breaker has been open since the bound passed, whoever finds it
// out first (fault: the outcome depended on whether a call came first).
func TestHalfOpenTrialCompletingAfterTheBound(t *testing.T) {
	f := openedBreaker(t, 1, cb.MaxWaitInHalfOpen(30*time.Second))
	f.clk.Advance(10 * time.Second)
	call := cb.DecorateFunc(f.b, func(context.Context, struct{}) (int, error) {
		f.clk.Advance(31 * time.Second) // the trial takes 31s: past the bound at 40s
		return 1, nil
	})
	v, err := call(context.Background(), struct{}{})
	require.NoError(t, err)
	assert.Equal(t, 1, v)
	require.Equal(t, cb.Open, f.state(), "a success too late to count")
	assert.Equal(t, cb.Open, f.rejected().State())
	assert.Equal(t, 9*time.Second, f.rec.lastRejection(t).RetryAfter, "open since 40s, until 50s; now 41s")
	f.clk.Advance(9 * time.Second)
	f.do(ok)
	require.Equal(t, cb.Closed, f.state())
	assert.Equal(t, []string{"closed→open@0s", "open→half-open@10s", "half-open→open@40s",
		"open→half-open@50s", "half-open→closed@50s"}, f.rec.transitionsAt())
}

// Trials that complete within the bound decide as before, whatever the bound.
func TestHalfOpenTrialsWithinTheBoundDecide(t *testing.T) {
	f := openedBreaker(t, 2, cb.MaxWaitInHalfOpen(time.Second))
	f.clk.Advance(10 * time.Second)
	f.do(slow(time.Second-1, nil))
	f.do(ok) // at 10s+1s-1ns: just within the bound
	require.Equal(t, cb.Closed, f.state())
}
