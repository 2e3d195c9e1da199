package fallback_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/fallback"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	errBoom     = errors.New("boom")
	errOther    = errors.New("other")
	errFallback = errors.New("fallback failed too")
)

type events struct {
	mu  sync.Mutex
	all []policy.Event
}

func (e *events) listen(ev policy.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

func (e *events) get() []policy.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]policy.Event(nil), e.all...)
}

// cached is the fallback of the tests: it reports the error it replaced.
func cached(_ context.Context, err error) (string, error) { return "cached (" + err.Error() + ")", nil }

func failWith(err error) decorate.Func[string, string] {
	return func(_ context.Context, q string) (string, error) {
		if err != nil {
			return "partial " + q, err
		}
		return "results for " + q, nil
	}
}

func newFallback(t *testing.T, opts ...fallback.Option) *fallback.Fallback[string] {
	t.Helper()
	f, err := fallback.New(cached, opts...)
	require.NoError(t, err)
	return f
}

func TestDefaults(t *testing.T) {
	assert.Equal(t, fallback.Config{}, fallback.DefaultConfig())
	assert.False(t, fallback.DefaultConfig().Disabled, "the defaults are enabled")
	f := newFallback(t)
	assert.Equal(t, "", f.InstanceID())
	assert.Equal(t, fallback.DefaultConfig(), f.Config())
	assert.Equal(t, reflect.TypeFor[string](), f.ResultType())
	assert.Equal(t, "shared", newFallback(t, fallback.Name("shared")).InstanceID())
	assert.Equal(t, "id", newFallback(t, fallback.Name("shared"), fallback.Name("id")).InstanceID())
}

func TestNilFunction(t *testing.T) {
	f, err := fallback.New[int](nil)
	require.Nil(t, f)
	var ce *policy.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, r4c.BadSpec, ce.Code)
	assert.Equal(t, "R4C-REG-010", r4c.CodeOf(err))
	assert.Contains(t, err.Error(), "R4C-REG-010")
	assert.Contains(t, err.Error(), "int")

	_, err = fallback.New[string](nil, fallback.HandleOn(errBoom), fallback.Name("n"))
	assert.Equal(t, r4c.BadSpec, r4c.CodeOf(err), "whatever the options")
}

func TestHandledErrorIsReplaced(t *testing.T) {
	clk := clock.NewManual()
	clk.Advance(42)
	ev := &events{}
	f := newFallback(t, fallback.WithClock(clk), fallback.Name("SearchAPI.Search"), fallback.OnEvent(ev.listen))
	wrapped := fmt.Errorf("search: %w", errBoom)
	v, err := fallback.DecorateFunc(f, failWith(wrapped))(context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, "cached (search: boom)", v)
	assert.Equal(t, []policy.Event{{Kind: fallback.EventApplied, Instance: "SearchAPI.Search", At: 42, Err: wrapped}}, ev.get())
}

func TestFallbackErrorIsReturned(t *testing.T) {
	f, err := fallback.New(func(_ context.Context, err error) (int, error) { return -1, errFallback })
	require.NoError(t, err)
	v, err := fallback.DecorateFunc(f, func(context.Context, struct{}) (int, error) { return 0, errBoom })(context.Background(), struct{}{})
	require.Same(t, errFallback, err)
	assert.Equal(t, -1, v)
}

func TestFallbackGetsTheCallersContext(t *testing.T) {
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "caller")
	var seen any
	f, err := fallback.New(func(ctx context.Context, _ error) (int, error) { seen = ctx.Value(key{}); return 0, nil })
	require.NoError(t, err)
	_, err = fallback.DecorateFunc(f, func(context.Context, struct{}) (int, error) { return 0, errBoom })(ctx, struct{}{})
	require.NoError(t, err)
	assert.Equal(t, "caller", seen)
}

func TestSuccessPassesThrough(t *testing.T) {
	ev := &events{}
	f := newFallback(t, fallback.OnEvent(ev.listen))
	v, err := fallback.DecorateFunc(f, failWith(nil))(context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, "results for go", v)
	assert.Empty(t, ev.get())
}

func TestHandleOn(t *testing.T) {
	ev := &events{}
	f := newFallback(t, fallback.HandleOn(errBoom, nil), fallback.OnEvent(ev.listen))
	v, err := fallback.DecorateFunc(f, failWith(fmt.Errorf("x: %w", errBoom)))(context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, "cached (x: boom)", v)

	v, err = fallback.DecorateFunc(f, failWith(errOther))(context.Background(), "go")
	require.Same(t, errOther, err, "an error outside HandleOn passes through")
	assert.Equal(t, "partial go", v, "with the call's own value")
	assert.Len(t, ev.get(), 1)
}

func TestIgnoreOn(t *testing.T) {
	f := newFallback(t, fallback.IgnoreOn(context.Canceled))
	_, err := fallback.DecorateFunc(f, failWith(context.Canceled))(context.Background(), "go")
	require.Same(t, context.Canceled, err)
	v, err := fallback.DecorateFunc(f, failWith(errBoom))(context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, "cached (boom)", v)
}

func TestIgnoreOnWinsOverHandleOn(t *testing.T) {
	ev := &events{}
	f := newFallback(t, fallback.HandleOn(errBoom, errOther), fallback.IgnoreOn(errBoom), fallback.OnEvent(ev.listen))
	assert.False(t, f.Handles(errBoom))
	assert.True(t, f.Handles(errOther))
	assert.False(t, f.Handles(nil))
	_, err := fallback.DecorateFunc(f, failWith(errBoom))(context.Background(), "go")
	require.Same(t, errBoom, err)
	assert.Empty(t, ev.get())
}

func TestDisabled(t *testing.T) {
	ev := &events{}
	f := newFallback(t, fallback.Enabled(false), fallback.OnEvent(ev.listen))
	_, err := fallback.DecorateFunc(f, failWith(errBoom))(context.Background(), "go")
	require.Same(t, errBoom, err)
	fut := fallback.DecorateAsyncFunc(f, func(context.Context, string) *async.Future[string] {
		return async.Failed[string](errBoom)
	})(context.Background(), "go")
	_, err = fut.Await(context.Background())
	require.Same(t, errBoom, err)
	assert.Empty(t, ev.get())
}

func TestSameOptionsGiveEqualConfigs(t *testing.T) {
	opts := []fallback.Option{fallback.HandleOn(errBoom), fallback.IgnoreOn(errOther)}
	assert.True(t, reflect.DeepEqual(newFallback(t, opts...).Config(), newFallback(t, opts...).Config()))
	assert.False(t, reflect.DeepEqual(newFallback(t, opts...).Config(), newFallback(t).Config()))
	assert.True(t, reflect.DeepEqual(fallback.DefaultConfig(), newFallback(t, fallback.HandleOn(), fallback.IgnoreOn(nil)).Config()))
}

func TestNewPolicy(t *testing.T) {
	p := fallback.NewPolicy(newFallback(t))
	assert.Equal(t, fallback.Layer, p.Layer())
	v, err := p.Decorate(func(context.Context) (string, error) { return "", errBoom })(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "cached (boom)", v)
	v, err = p.DecorateAsync(func(context.Context) *async.Future[string] {
		return async.Failed[string](errBoom)
	})(context.Background()).Await(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "cached (boom)", v)
}

func TestAllocations(t *testing.T) {
	f := newFallback(t, fallback.IgnoreOn(errOther), fallback.OnEvent(func(policy.Event) {}))
	ctx := context.Background()
	ok := fallback.DecorateFunc(f, failWith(nil))
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = ok(ctx, "") }), "success")
	ignored := fallback.DecorateFunc(f, func(context.Context, string) (string, error) { return "", errOther })
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = ignored(ctx, "") }), "an ignored error")
	constant, err := fallback.New(func(context.Context, error) (string, error) { return "default", nil },
		fallback.OnEvent(func(policy.Event) {}))
	require.NoError(t, err)
	handled := fallback.DecorateFunc(constant, func(context.Context, string) (string, error) { return "", errBoom })
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = handled(ctx, "") }),
		"a handled error costs only what the fallback function allocates")

	done := async.Completed("v")
	aok := fallback.DecorateAsyncFunc(f, func(context.Context, string) *async.Future[string] { return done })
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = aok(ctx, "") }), "async: completed success")
}
