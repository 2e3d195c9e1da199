package promise_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/promise"
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
	f, p := promise.New[int](func() bool { hooks++; return true })
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
	_, err := done(t, f)
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
	_, err := done(t, f)
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
	v, err := await(t, f)
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

const generous = time.Minute

func bg() context.Context { return context.Background() }

// await waits for f with a generous bound, failing the test if it stays pending.
func await[T any](t *testing.T, f *async.Future[T]) (T, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(bg(), generous)
	defer cancel()
	v, err := f.Await(ctx)
	require.NotErrorIs(t, err, context.DeadlineExceeded, "future still pending")
	return v, err
}

// done requires f to be complete already and returns its outcome, through Result and
// through Await (with a done context, which a completed future ignores).
func done[T any](t *testing.T, f *async.Future[T]) (T, error) {
	t.Helper()
	v, ok, err := f.Result()
	require.True(t, ok, "future should be complete")
	ctx, cancel := context.WithCancel(bg())
	cancel()
	av, aerr := f.Await(ctx)
	require.Equal(t, v, av)
	require.Equal(t, err, aerr)
	return v, err
}

func requirePending[T any](t *testing.T, f *async.Future[T]) {
	t.Helper()
	_, ok, err := f.Result()
	require.False(t, ok, "future should be pending")
	require.NoError(t, err)
	select {
	case <-f.Done():
		t.Fatal("Done closed on a pending future")
	default:
	}
}
