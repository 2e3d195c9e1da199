package promise_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/futuretest"
	"github.com/resilience4go/resilience4go/policy/internal/promise"
)

// A claimed future can no longer be canceled: Cancel reports false, runs no hook, and the
// claimer's Complete completes it (SPEC AS-7).
func TestPromise_AS7_ClaimWinsAgainstCancel(t *testing.T) {
	hooks := 0
	f, p := promise.New[int](func() bool { hooks++; return true })
	require.True(t, p.Claim())
	assert.False(t, p.Claim(), "a second claim loses")
	assert.False(t, f.Cancel(), "Cancel after a claim does nothing")
	assert.Zero(t, hooks)
	futuretest.RequirePending(t, f)
	assert.True(t, p.Complete(7, nil))
	v, err := futuretest.Done(t, f)
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	assert.False(t, p.Complete(8, nil), "the future is complete")
	assert.False(t, f.Cancel())
}

// Cancel that begins first wins: the claim loses, and so does Complete (SPEC AS-7).
func TestPromise_AS7_CancelWinsAgainstClaim(t *testing.T) {
	hooks := 0
	f, p := promise.New[int](func() bool { hooks++; return true })
	assert.True(t, f.Cancel())
	assert.Equal(t, 1, hooks)
	assert.False(t, p.Claim())
	assert.False(t, p.Complete(1, nil))
	_, err := futuretest.Done(t, f)
	assert.ErrorIs(t, err, async.ErrCanceled)
}

// Between Cancel's claim and its hook (the future's callbacks run in between), a claim
// loses: the test completes the promise from that window.
func TestPromise_AS7_ClaimInCancelsWindowLoses(t *testing.T) {
	hooks := 0
	f, p := promise.New[int](func() bool { hooks++; return true })
	var claimed, completed bool
	f.OnComplete(func(int, error) {
		claimed = p.Claim()
		completed = p.Complete(1, nil)
	})
	assert.True(t, f.Cancel())
	assert.False(t, claimed)
	assert.False(t, completed)
	assert.Equal(t, 1, hooks)
	_, err := futuretest.Done(t, f)
	assert.ErrorIs(t, err, async.ErrCanceled)
}

// Without a claim, the first Complete wins; a plain Complete after a lost race reports
// false. A nil onCancel is allowed, and the zero Promise does nothing.
func TestPromise_CompleteWithoutClaim(t *testing.T) {
	f, p := promise.New[int](nil)
	boom := errors.New("boom")
	assert.True(t, p.Complete(0, boom))
	assert.False(t, p.Complete(1, nil))
	assert.False(t, p.Claim())
	_, err := futuretest.Done(t, f)
	assert.ErrorIs(t, err, boom)

	var zero promise.Promise[int]
	assert.False(t, zero.Claim())
	assert.False(t, zero.Complete(1, nil))

	g, q := promise.New[int](nil)
	assert.True(t, g.Cancel(), "a promise with no hook has no work started")
	assert.False(t, q.Complete(1, nil))
}

// Callbacks and awaiters see the claimer's result.
func TestPromise_ClaimedCompletionRunsCallbacks(t *testing.T) {
	f, p := promise.New[string](nil)
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
	v, err := futuretest.Await(t, f)
	require.NoError(t, err)
	assert.Equal(t, "x", v)
}

// Neither New beyond its future, nor a claim and its completion, allocate.
func TestPromise_Allocations(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		f, p := promise.New[int](nil)
		p.Claim()
		p.Complete(1, nil)
		_, _, _ = f.Result()
	})
	assert.Equal(t, 1.0, allocs)
}
