package optout

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// store counts its calls and fails Get with err.
type store struct {
	calls int
	err   error
}

func (s *store) Get(context.Context, string) (string, error) { s.calls++; return "v", s.err }
func (s *store) Put(context.Context, string, string) error   { s.calls++; return nil }
func (s *store) Health(context.Context) error                { s.calls++; return nil }

func newStore(t *testing.T, impl Store) *StoreResilient {
	t.Helper()
	reg, err := resilience.NewRegistry(resilience.WithClock(clock.NewManual()))
	require.NoError(t, err)
	w, err := NewStoreResilient(impl, reg)
	require.NoError(t, err)
	return w
}

// GN-3: Get and Put share the interface's limiter "store" (2 per second); Health, marked
// //resilience:none, calls the implementation whatever the limiter says.
func TestNone_LeavesTheInterfacesDirectivesOff(t *testing.T) {
	ctx := context.Background()
	impl := &store{}
	w := newStore(t, impl)
	_, err := w.Get(ctx, "a")
	require.NoError(t, err)
	require.NoError(t, w.Put(ctx, "a", "b"))
	_, err = w.Get(ctx, "a")
	assert.ErrorIs(t, err, ratelimit.ErrExceeded, "the shared burst of 2 is spent")
	assert.ErrorIs(t, w.Put(ctx, "a", "b"), ratelimit.ErrExceeded)
	for range 5 {
		require.NoError(t, w.Health(ctx), "Health is not limited")
	}
	assert.Equal(t, 2+5, impl.calls)
}

// GN-2: errors named by import path (io.EOF, net/http.ErrServerClosed), which the file
// does not import, abort the retry at once; another error is retried.
func TestErrorsByImportPath(t *testing.T) {
	for _, c := range []struct {
		err   error // what the implementation fails with
		want  error // what the call fails with
		calls int
	}{
		{io.EOF, io.EOF, 1},
		{http.ErrServerClosed, http.ErrServerClosed, 1},
		// Retried: the second attempt takes the limiter's last permit, and the third is
		// refused by it (2 per second), which ends the call.
		{errors.New("other"), ratelimit.ErrExceeded, 2},
	} {
		impl := &store{err: c.err}
		w := newStore(t, impl)
		_, err := w.Get(context.Background(), "k")
		assert.ErrorIs(t, err, c.want, "%v", c.err)
		assert.Equal(t, c.calls, impl.calls, "%v", c.err)
	}
}
