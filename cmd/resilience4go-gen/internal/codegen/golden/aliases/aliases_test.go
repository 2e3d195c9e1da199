package aliases_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/cmd/resilience4go-gen/internal/codegen/golden/aliases"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/resilience"
)

// The error lists name errors through the names the directive's file imports their
// packages under (iofs.ErrNotExist, ctxpkg.DeadlineExceeded, stderrors.ErrUnsupported,
// errs.ErrUnsupported); the generated file imports them under names of its own, and the
// policies get the same error values (GN-2).

// resolver fails with err, counting its calls.
type resolver struct {
	err   error
	calls int
}

func (r *resolver) Resolve(_ context.Context, ref string) (*url.URL, error) {
	r.calls++
	if r.err != nil {
		return nil, r.err
	}
	return url.Parse(ref)
}

func (r *resolver) ResolveAsync(ctx context.Context, ref string) *async.Future[*url.URL] {
	u, err := r.Resolve(ctx, ref)
	if err != nil {
		return async.Failed[*url.URL](err)
	}
	return async.Completed(u)
}

func (r *resolver) Open(_ context.Context, name string) (io.ReadCloser, error) {
	r.calls++
	if r.err != nil {
		return nil, r.err
	}
	return io.NopCloser(strings.NewReader(name)), nil
}

func newRegistry(t *testing.T) *resilience.Registry {
	t.Helper()
	reg, err := resilience.NewRegistry(resilience.WithClock(clock.NewManual()))
	require.NoError(t, err)
	return reg
}

// SPEC CO-8: Resolve's retry aborts on each error its abortOn names, whatever name the file
// imports its package under, and retries any other.
func TestResolve_AbortsOnAliasedErrors(t *testing.T) {
	for _, c := range []struct {
		err   error
		calls int
	}{
		{fs.ErrNotExist, 1},
		{context.DeadlineExceeded, 1},
		{errors.ErrUnsupported, 1},
		{aliases.ErrGone, 1},
		{io.ErrUnexpectedEOF, 3},
	} {
		impl := &resolver{err: c.err}
		w, err := aliases.NewResolverResilient(impl, newRegistry(t))
		require.NoError(t, err)
		_, err = w.Resolve(context.Background(), "https://example.com")
		require.ErrorIs(t, err, c.err)
		assert.Equal(t, c.calls, impl.calls, "%v", c.err)
	}

	impl := &resolver{}
	w, err := aliases.NewResolverResilient(impl, newRegistry(t))
	require.NoError(t, err)
	u, err := w.ResolveAsync(context.Background(), "https://example.com/x").Await(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "/x", u.Path)
}

// SPEC CO-8: Opener's breaker ignores the errors of its file's error list, errs.ErrUnsupported
// and io.EOF, and records any other.
func TestOpen_BreakerIgnoresAliasedErrors(t *testing.T) {
	impl := &resolver{}
	reg := newRegistry(t)
	w, err := aliases.NewOpenerResilient(impl, reg)
	require.NoError(t, err)
	for _, cause := range []error{errors.ErrUnsupported, io.EOF, io.ErrUnexpectedEOF} {
		impl.err = cause
		_, err := w.Open(context.Background(), "name")
		require.ErrorIs(t, err, cause)
	}
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "Opener.Open")
	require.NoError(t, err)
	assert.Equal(t, 1, cb.Snapshot().BufferedCalls, "the ignored errors are not counted")
	assert.Equal(t, 1, cb.Snapshot().FailedCalls)
}
