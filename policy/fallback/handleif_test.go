package fallback_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy/fallback"
)

// unavailable is HandleIf's predicate of these tests: a 503 status returned as a value.
func unavailable(status int, _ error) bool { return status == 503 }

// statusFallback is a fallback answering 299 that records the errors it receives.
type statusFallback struct {
	calls int
	errs  []error
}

func (s *statusFallback) fn(_ context.Context, err error) (int, error) {
	s.calls++
	s.errs = append(s.errs, err)
	return 299, nil
}

func newStatusFallback(t *testing.T, opts ...fallback.Option) (*fallback.Fallback[int], *statusFallback) {
	t.Helper()
	sf := &statusFallback{}
	f, err := fallback.New(sf.fn, opts...)
	require.NoError(t, err)
	return f, sf
}

func returns(status int, err error) decorate.Func[struct{}, int] {
	return func(context.Context, struct{}) (int, error) { return status, err }
}

func TestHandleIfSendsAResultToTheFallback(t *testing.T) {
	ev := &events{}
	f, sf := newStatusFallback(t, fallback.HandleIf(unavailable), fallback.OnEvent(ev.listen))

	v, err := fallback.DecorateFunc(f, returns(503, nil))(context.Background(), struct{}{})
	require.NoError(t, err)
	assert.Equal(t, 299, v, "the fallback's result replaces the 503")
	assert.Equal(t, 1, sf.calls)
	assert.Equal(t, []error{nil}, sf.errs, "the fallback function receives the nil error")
	require.Len(t, ev.get(), 1)
	assert.Equal(t, fallback.EventApplied, ev.get()[0].Kind)
	assert.NoError(t, ev.get()[0].Err)

	v, err = fallback.DecorateFunc(f, returns(200, nil))(context.Background(), struct{}{})
	require.NoError(t, err)
	assert.Equal(t, 200, v, "a result the predicate rejects passes through")
	assert.Equal(t, 1, sf.calls)

	v, err = fallback.DecorateFunc(f, returns(0, errBoom))(context.Background(), struct{}{})
	require.NoError(t, err)
	assert.Equal(t, 299, v, "errors are still handled by the lists")
	assert.Equal(t, []error{nil, errBoom}, sf.errs)
}

func TestIgnoreOnWinsOverHandleIf(t *testing.T) {
	f, sf := newStatusFallback(t, fallback.IgnoreOn(errOther), fallback.HandleIf(func(int, error) bool { return true }))
	v, err := fallback.DecorateFunc(f, returns(503, errOther))(context.Background(), struct{}{})
	require.Same(t, errOther, err)
	assert.Equal(t, 503, v)
	assert.Zero(t, sf.calls)
}

func TestHandleIfForAnotherTypeIsRefused(t *testing.T) {
	f, err := fallback.New(func(context.Context, error) (int, error) { return 0, nil },
		fallback.HandleIf(func(string, error) bool { return true }))
	require.Nil(t, f)
	assert.Equal(t, "R4C-REG-010", r4c.CodeOf(err))
	assert.Contains(t, err.Error(), "string")
	assert.Contains(t, err.Error(), "int")

	_, err = fallback.New(func(context.Context, error) (int, error) { return 0, nil },
		fallback.HandleIf(func(string, error) bool { return true }), fallback.HandleIf[int](nil))
	require.NoError(t, err, "a nil predicate removes the earlier one")
}

func TestHandleIfAsync(t *testing.T) {
	for _, tc := range []struct {
		name string
		fut  func(status int) (*async.Future[int], func())
	}{
		{"completed future", func(status int) (*async.Future[int], func()) {
			return async.Completed(status), func() {}
		}},
		{"promise", func(status int) (*async.Future[int], func()) {
			f, complete := async.NewPromise[int]()
			return f, func() { complete(status, nil) }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, sf := newStatusFallback(t, fallback.HandleIf(unavailable))

			inner, finish := tc.fut(503)
			out := fallback.DecorateAsyncFunc(f, func(context.Context, struct{}) *async.Future[int] { return inner })(
				context.Background(), struct{}{})
			finish()
			v, err := out.Await(context.Background())
			require.NoError(t, err)
			assert.Equal(t, 299, v)
			assert.Equal(t, []error{nil}, sf.errs, "the fallback function receives the nil error")

			inner, finish = tc.fut(200)
			out = fallback.DecorateAsyncFunc(f, func(context.Context, struct{}) *async.Future[int] { return inner })(
				context.Background(), struct{}{})
			finish()
			v, err = out.Await(context.Background())
			require.NoError(t, err)
			assert.Equal(t, 200, v)
			assert.Equal(t, 1, sf.calls)
		})
	}

	t.Run("IgnoreOn wins", func(t *testing.T) {
		f, sf := newStatusFallback(t, fallback.IgnoreOn(errOther), fallback.HandleIf(func(int, error) bool { return true }))
		p, complete := async.NewPromise[int]()
		out := fallback.DecorateAsyncFunc(f, func(context.Context, struct{}) *async.Future[int] { return p })(
			context.Background(), struct{}{})
		complete(503, errOther)
		_, err := out.Await(context.Background())
		require.Same(t, errOther, err)
		assert.Zero(t, sf.calls)
	})
}

func TestErrorListsAppend(t *testing.T) {
	f := newFallback(t, fallback.HandleOn(errBoom), fallback.HandleOn(errOther))
	assert.Equal(t, []error{errBoom, errOther}, f.Config().HandleOn, "each call adds to the list")
	assert.True(t, f.Handles(errBoom), "the first call's errors are still handled")
	assert.True(t, f.Handles(errOther))
	assert.False(t, f.Handles(errFallback))

	f = newFallback(t, fallback.IgnoreOn(errBoom), fallback.IgnoreOn(errOther, nil))
	assert.Equal(t, []error{errBoom, errOther}, f.Config().IgnoreOn, "each call adds to the list, nil skipped")
	assert.False(t, f.Handles(errBoom))
	assert.False(t, f.Handles(errOther))
	assert.True(t, f.Handles(errFallback))
}
