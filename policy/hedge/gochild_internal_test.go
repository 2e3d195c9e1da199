package hedge

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
)

// SPEC HG-2, HG-17: the context that async.Go gives fn when called with an attempt's
// context behaves as context.WithCancel of it: the caller's deadline and values, running
// until fn returns, then canceled with context.Canceled while the attempt's context runs
// on; contexts derived from it follow it. A second async.Go with the same attempt's
// context gets a context of its own.
func TestHG2_GoChildEndsWhenFnReturns(t *testing.T) {
	deadline := time.Unix(4000000000, 0)
	parent, stop := context.WithDeadline(context.WithValue(context.Background(), valueKey{}, "v"), deadline)
	defer stop()
	c := newAttemptCtx(parent)
	got := make(chan context.Context, 2)
	var derived context.Context
	var cancelDerived context.CancelFunc
	f := async.Go(c, func(ctx context.Context) (int, error) {
		d, ok := ctx.Deadline()
		assert.True(t, ok)
		assert.Equal(t, deadline, d)
		assert.Equal(t, "v", ctx.Value(valueKey{}))
		assert.NoError(t, ctx.Err())
		assert.False(t, isClosed(ctx.Done()))
		derived, cancelDerived = context.WithCancel(ctx)
		got <- ctx
		return 1, nil
	})
	_, err := f.Await(context.Background())
	require.NoError(t, err)
	first := <-got
	<-first.Done()
	assert.ErrorIs(t, first.Err(), context.Canceled)
	<-derived.Done()
	assert.ErrorIs(t, derived.Err(), context.Canceled)
	cancelDerived()
	assert.NoError(t, c.Err(), "the attempt's context runs on")

	g := async.Go(c, func(ctx context.Context) (int, error) { got <- ctx; return 2, nil })
	_, err = g.Await(context.Background())
	require.NoError(t, err)
	assert.NotSame(t, first, <-got, "a context of its own")
	c.cancel()
}

// SPEC HG-2, HG-9: the attempt's context canceled while fn runs cancels fn's context with
// the attempt's error (the caller's, once it has ended), and Cancel on the future of
// async.Go cancels fn's context alone.
func TestHG9_GoChildFollowsTheAttempt(t *testing.T) {
	parent, stop := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer stop()
	c := newAttemptCtx(parent)
	ready := make(chan context.Context, 1)
	f := async.Go(c, func(ctx context.Context) (int, error) {
		ready <- ctx
		<-ctx.Done()
		return 0, ctx.Err()
	})
	ctx := <-ready
	c.cancel()
	_, err := f.Await(context.Background())
	assert.ErrorIs(t, err, context.DeadlineExceeded, "canceled with the caller's error")
	assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)

	c = newAttemptCtx(context.Background())
	release := make(chan struct{})
	g := async.Go(c, func(ctx context.Context) (int, error) {
		ready <- ctx
		<-release
		return 0, nil
	})
	ctx = <-ready
	assert.False(t, g.Cancel(), "the work has started")
	<-ctx.Done()
	assert.ErrorIs(t, ctx.Err(), context.Canceled)
	assert.NoError(t, c.Err(), "the attempt's context runs on")
	close(release)
	c.cancel()
}

// SPEC HG-2: an attempt's context already canceled gives async.Go a context canceled at
// once, with the attempt's error, as context.WithCancel would.
func TestHG2_GoChildOfACanceledAttempt(t *testing.T) {
	c := newAttemptCtx(context.Background())
	c.cancel()
	f := async.Go(c, func(ctx context.Context) (int, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	})
	_, err := f.Await(context.Background())
	assert.True(t, errors.Is(err, context.Canceled))
}
