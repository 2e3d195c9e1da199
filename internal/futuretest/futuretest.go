// Package futuretest holds the assertions the tests of futures share: wait for a future
// with a generous bound, require one complete or pending.
package futuretest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
)

// Generous bounds a real wait that must not hang; it never makes a test pass.
const Generous = time.Minute

// Await waits for f, at most Generous, failing the test if it stays pending, and returns
// its value and error.
func Await[T any](t testing.TB, f *async.Future[T]) (T, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Generous)
	defer cancel()
	v, err := f.Await(ctx)
	require.NotErrorIs(t, err, context.DeadlineExceeded, "future still pending")
	return v, err
}

// Done requires f to be complete already and returns its outcome, through Result and
// through Await (with a done context, which a completed future ignores): both must agree.
func Done[T any](t testing.TB, f *async.Future[T]) (T, error) {
	t.Helper()
	v, ok, err := f.Result()
	require.True(t, ok, "future should be complete")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	av, aerr := f.Await(ctx)
	require.Equal(t, v, av)
	require.Equal(t, err, aerr)
	return v, err
}

// RequirePending requires f to be pending: Result says not ok, with no error, and Done is
// not closed.
func RequirePending[T any](t testing.TB, f *async.Future[T]) {
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
