package async_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
)

// A claimed future can no longer be canceled: Cancel reports false, runs no hook, and the
// claimer's Complete completes it (SPEC AS-7).
func TestPromise_AS7_ClaimWinsAgainstCancel(t *testing.T) {
	hooks := 0
	f, p := async.NewClaimablePromise[int](func() bool { hooks++; return true })
	require.True(t, p.Claim())
	assert.False(t, p.Claim(), "a second claim loses")
	assert.False(t, f.Cancel(), "Cancel after a claim does nothing")
	assert.Zero(t, hooks)
	requirePending(t, f)
	assert.True(t, p.Complete(7, nil))
	v, err := done(t, f)
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	assert.False(t, p.Complete(8, nil), "the future is complete")
	assert.False(t, f.Cancel())
}

// Cancel that begins first wins: the claim loses, and so does Complete (SPEC AS-7).
func TestPromise_AS7_CancelWinsAgainstClaim(t *testing.T) {
	hooks := 0
	f, p := async.NewClaimablePromise[int](func() bool { hooks++; return true })
	assert.True(t, f.Cancel())
	assert.Equal(t, 1, hooks)
	assert.False(t, p.Claim())
	assert.False(t, p.Complete(1, nil))
	_, err := done(t, f)
	assert.ErrorIs(t, err, async.ErrCanceled)
}

// Between Cancel's claim and its hook (the future's callbacks run in between), a claim
// loses: the test completes the promise from that window.
func TestPromise_AS7_ClaimInCancelsWindowLoses(t *testing.T) {
	hooks := 0
	f, p := async.NewClaimablePromise[int](func() bool { hooks++; return true })
	var claimed, completed bool
	f.OnComplete(func(int, error) {
		claimed = p.Claim()
		completed = p.Complete(1, nil)
	})
	assert.True(t, f.Cancel())
	assert.False(t, claimed)
	assert.False(t, completed)
	assert.Equal(t, 1, hooks)
	_, err := done(t, f)
	assert.ErrorIs(t, err, async.ErrCanceled)
}

// Without a claim, the first Complete wins; a plain Complete after a lost race reports
// false. A nil onCancel is allowed, and the zero Promise does nothing.
func TestPromise_CompleteWithoutClaim(t *testing.T) {
	f, p := async.NewClaimablePromise[int](nil)
	boom := errors.New("boom")
	assert.True(t, p.Complete(0, boom))
	assert.False(t, p.Complete(1, nil))
	assert.False(t, p.Claim())
	_, err := done(t, f)
	assert.ErrorIs(t, err, boom)

	var zero async.Promise[int]
	assert.False(t, zero.Claim())
	assert.False(t, zero.Complete(1, nil))

	g, q := async.NewClaimablePromise[int](nil)
	assert.True(t, g.Cancel(), "a promise with no hook has no work started")
	assert.False(t, q.Complete(1, nil))
}

// Callbacks and awaiters see the claimer's result.
func TestPromise_ClaimedCompletionRunsCallbacks(t *testing.T) {
	f, p := async.NewClaimablePromise[string](nil)
	var got string
	f.OnComplete(func(v string, _ error) { got = v })
	ch := f.Done()
	require.True(t, p.Claim())
	select {
	case <-ch:
		t.Fatal("a claim does not complete the future")
	default:
	}
	p.Complete("x", nil)
	<-ch
	assert.Equal(t, "x", got)
	v, err := await(t, f)
	require.NoError(t, err)
	assert.Equal(t, "x", v)
}

// Neither NewClaimablePromise beyond its future, nor a claim and its completion, allocate.
func TestPromise_Allocations(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		f, p := async.NewClaimablePromise[int](nil)
		p.Claim()
		p.Complete(1, nil)
		_, _, _ = f.Result()
	})
	assert.Equal(t, 1.0, allocs)
}

// A Delayed whose future Cancel has claimed, but whose cancel hook has not run yet, does
// not end another way: its wait's delay (StartWithin) does not call Stop(ErrExpired), and
// the call ends once, with Stop(ErrCanceled) (SPEC AS-7).
func TestDelayed_AS7_ExpiryRacingCancelStopsOnceCanceled(t *testing.T) {
	clk := clock.NewManual()
	c := newCall()
	f := c.d.Init(clk, bg(), c, nil)
	c.d.StartWithin(time.Second)
	f.OnComplete(func(int, error) { clk.Advance(time.Second) }) // in Cancel, before its hook
	assert.True(t, f.Cancel())
	starts, stops := c.counts()
	assert.Zero(t, starts)
	assert.Equal(t, []error{async.ErrCanceled}, stops)
	_, err := done(t, f)
	assert.ErrorIs(t, err, async.ErrCanceled)
	assert.Zero(t, clk.PendingTasks())
}

// A wait whose delay passes in that window starts nothing: Cancel reports true, as the
// work never starts (SPEC AS-7, AS-3).
func TestDelayed_AS7_StartRacingCancelStartsNothing(t *testing.T) {
	clk := clock.NewManual()
	c := newCall()
	f := c.d.Init(clk, bg(), c, nil)
	c.d.StartAfter(time.Second)
	f.OnComplete(func(int, error) { clk.Advance(time.Second) })
	assert.True(t, f.Cancel(), "the work never started")
	starts, stops := c.counts()
	assert.Zero(t, starts)
	assert.Equal(t, []error{async.ErrCanceled}, stops)

	// The owner's Start in that window starts nothing either.
	c2 := newCall()
	f2 := c2.d.Init(clk, bg(), c2, nil)
	c2.d.StartWithin(time.Minute)
	var started bool
	f2.OnComplete(func(int, error) { started = c2.d.Start() })
	assert.True(t, f2.Cancel())
	assert.False(t, started)
	starts, stops = c2.counts()
	assert.Zero(t, starts)
	assert.Equal(t, []error{async.ErrCanceled}, stops)
	assert.Zero(t, clk.PendingTasks())
}

// With an Observer, a result arriving in that window is not observed, and End in it does
// not end the call: Stop is called once, with ErrCanceled (SPEC AS-7).
func TestDelayed_AS7_ObservedResultRacingCancel(t *testing.T) {
	clk := clock.NewManual()
	r := &retrying{}
	f := r.d.Init(clk, bg(), r, r)
	r.d.StartAfter(0)
	clk.Advance(0)
	starts, _ := r.counts()
	require.Equal(t, 1, starts)
	f.OnComplete(func(int, error) { r.finish(0, 5, nil) })
	assert.False(t, f.Cancel(), "the work had started")
	r.mu.Lock()
	results := r.results
	r.mu.Unlock()
	assert.Empty(t, results, "a result after Cancel began is not observed")
	_, stops := r.counts()
	assert.Equal(t, []error{async.ErrCanceled}, stops)

	// End from the Observer's goroutine, in that window, does not end it either.
	r2 := &retrying{}
	f2 := r2.d.Init(clk, bg(), r2, r2)
	var ended bool
	f2.OnComplete(func(int, error) { ended = r2.d.End() })
	assert.True(t, f2.Cancel())
	assert.False(t, ended)
	_, stops = r2.counts()
	assert.Equal(t, []error{async.ErrCanceled}, stops)
}
