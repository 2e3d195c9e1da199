package resilience_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/resilience"
)

// tagger is a user's policy that appends its layer name to results, so a test sees the
// order in which layers ran. It drops its context when told to.
type tagger struct {
	layer   policy.Layer
	dropCtx bool
}

func (g tagger) Layer() policy.Layer { return g.layer }

func (g tagger) Decorate(next policy.Call[string]) policy.Call[string] {
	return func(ctx context.Context) (string, error) {
		if g.dropCtx {
			ctx = context.Background()
		}
		v, err := next(ctx)
		return v + ">" + string(g.layer), err
	}
}

func (g tagger) DecorateAsync(next policy.AsyncCall[string]) policy.AsyncCall[string] {
	return func(ctx context.Context) *async.Future[string] {
		return async.Map(next(ctx), func(v string) (string, error) { return v + ">" + string(g.layer), nil })
	}
}

// User layers go where the order names them, innermost otherwise, in the order of their
// specs; they work for functions of any arity, sync and async.
func TestUse_PlacesUserLayers(t *testing.T) {
	reg, _ := newRegistry(t)
	specs := []resilience.Spec{
		resilience.Use[string](tagger{layer: "a"}),
		resilience.Use[string](tagger{layer: "b"}),
		resilience.Retry(),
	}
	ctx := context.Background()

	none, err := resilience.Wrap(reg, "F.None", func(context.Context) (string, error) { return "fn", nil }, specs...)
	require.NoError(t, err)
	v, err := none(ctx)
	require.NoError(t, err)
	assert.Equal(t, "fn>b>a", v, "unnamed user layers are innermost, the first spec outside")

	one, err := resilience.Wrap1(reg, "F.One", func(_ context.Context, q string) (string, error) { return q, nil },
		append(specs, resilience.Order("b", retry.Layer, "a"))...)
	require.NoError(t, err)
	v, err = one(ctx, "q")
	require.NoError(t, err)
	assert.Equal(t, "q>a>b", v)

	two, err := resilience.Wrap2(reg, "F.Two", func(_ context.Context, a, b string) (string, error) { return a + b, nil }, specs...)
	require.NoError(t, err)
	v, err = two(ctx, "x", "y")
	require.NoError(t, err)
	assert.Equal(t, "xy>b>a", v)

	asyncOne, err := resilience.WrapAsync1(reg, "F.Async", func(_ context.Context, q string) *async.Future[string] {
		return async.Completed(q)
	}, append(specs, resilience.Order("b", "a"))...)
	require.NoError(t, err)
	v, err = asyncOne(ctx, "q").Await(ctx)
	require.NoError(t, err)
	assert.Equal(t, "q>a>b", v)

	p, err := resilience.NewPipeline[string](reg, "F.Pipe", specs...)
	require.NoError(t, err)
	v, err = p.Execute(ctx, func(context.Context) (string, error) { return "p", nil })
	require.NoError(t, err)
	assert.Equal(t, "p>b>a", v)
}

// A user policy that does not pass on its context loses the arguments of the layers
// inside it: the call fails with an error instead of running with the wrong arguments.
func TestUse_DroppedContextIsAnError(t *testing.T) {
	reg, _ := newRegistry(t)
	one, err := resilience.Wrap1(reg, "F.One", func(_ context.Context, q string) (string, error) { return q, nil },
		resilience.Use[string](tagger{layer: "drop", dropCtx: true}))
	require.NoError(t, err)
	_, err = one(context.Background(), "q")
	require.ErrorIs(t, err, resilience.ErrContextDropped)
}

// Use refuses a nil policy, an empty or built-in layer name, and another result type.
func TestUse_BadPoliciesAreRefused(t *testing.T) {
	reg, _ := newRegistry(t)
	fn := func(context.Context) (string, error) { return "", nil }
	for _, spec := range []resilience.Spec{
		resilience.Use[string](nil),
		resilience.Use[string](tagger{layer: ""}),
		resilience.Use[string](tagger{layer: retry.Layer}),
		resilience.Use[int](retry.NewPolicy[int](mustRetry(t))),
	} {
		_, err := resilience.Wrap(reg, "F.Bad", fn, spec)
		requireCode(t, err, r4c.BadSpec)
	}
	_, err := resilience.Wrap(reg, "F.Twice", fn, resilience.Use[string](tagger{layer: "a"}), resilience.Use[string](tagger{layer: "a"}))
	requireCode(t, err, r4c.BadSpec)
}

func mustRetry(t *testing.T) *retry.Retry {
	r, err := retry.New()
	require.NoError(t, err)
	return r
}

// Composing with a user layer keeps the built-in layers' zero-allocation paths for a
// function of no arguments.
func TestUse_AllocationsOfAUserLayer(t *testing.T) {
	reg, _ := newRegistry(t)
	call, err := resilience.Wrap(reg, "F.None", func(context.Context) (int, error) { return 1, nil },
		resilience.Use[int](passThrough{}), resilience.Retry())
	require.NoError(t, err)
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = call(ctx) }))

	// With an argument, the call's context carries it across the user's layer: two
	// allocations, the context and the boxed argument.
	one, err := resilience.Wrap1(reg, "F.One", func(_ context.Context, q string) (int, error) { return len(q), nil },
		resilience.Use[int](passThrough{}), resilience.Retry())
	require.NoError(t, err)
	assert.Equal(t, 2.0, testing.AllocsPerRun(100, func() { _, _ = one(ctx, "query") }))
}

type passThrough struct{}

func (passThrough) Layer() policy.Layer                                         { return "pass" }
func (passThrough) Decorate(next policy.Call[int]) policy.Call[int]             { return next }
func (passThrough) DecorateAsync(n policy.AsyncCall[int]) policy.AsyncCall[int] { return n }

// nilDecorator is a user's policy whose decorators return nil.
type nilDecorator struct{}

func (nilDecorator) Layer() policy.Layer                                       { return "nil" }
func (nilDecorator) Decorate(policy.Call[int]) policy.Call[int]                { return nil }
func (nilDecorator) DecorateAsync(policy.AsyncCall[int]) policy.AsyncCall[int] { return nil }

// panicky is a user's policy whose Decorate panics.
type panicky struct{}

func (panicky) Layer() policy.Layer                                         { return "panicky" }
func (panicky) Decorate(policy.Call[int]) policy.Call[int]                  { panic("decorate") }
func (panicky) DecorateAsync(n policy.AsyncCall[int]) policy.AsyncCall[int] { panic("decorate") }

// A user's policy whose Decorate returns nil fails the wrap with R4C-REG-010; one whose
// Decorate panics leaves nothing registered. Either way the registry stays usable.
func TestUse_NilOrPanickingDecorateRegistersNothing(t *testing.T) {
	reg, _ := newRegistry(t)
	fn := func(context.Context) (int, error) { return 1, nil }
	_, err := resilience.Wrap(reg, "F.Nil", fn, resilience.Use[int](nilDecorator{}), resilience.Bulkhead())
	requireCode(t, err, r4c.BadSpec)
	_, err = resilience.WrapAsync(reg, "F.Nil", func(context.Context) *async.Future[int] { return async.Completed(1) },
		resilience.Use[int](nilDecorator{}))
	requireCode(t, err, r4c.BadSpec)
	_, err = resilience.NewPipeline[int](reg, "F.Nil", resilience.Use[int](nilDecorator{}))
	requireCode(t, err, r4c.BadSpec)
	assert.Panics(t, func() {
		_, _ = resilience.Wrap(reg, "F.Panic", fn, resilience.Use[int](panicky{}), resilience.Bulkhead())
	})
	assert.Empty(t, reg.Snapshot().Policies)
	_, err = resilience.Wrap(reg, "F.Panic", fn, resilience.Bulkhead())
	require.NoError(t, err, "the registry's lock was released")
	policies := reg.Snapshot().Policies
	require.Len(t, policies, 1)
	assert.IsType(t, bulkhead.Snapshot{}, policies[0].State)
}

// Two nil user policies are reported as nil, not as a layer given twice; an empty Order
// given twice is an order given twice.
func TestUse_Messages(t *testing.T) {
	reg, _ := newRegistry(t)
	fn := func(context.Context) (int, error) { return 1, nil }
	_, err := resilience.Wrap(reg, "F.Call", fn, resilience.Use[int](nil), resilience.Use[int](nil))
	ce := requireCode(t, err, r4c.BadSpec)
	assert.Contains(t, ce.Reason, "nil")
	_, err = resilience.Wrap(reg, "F.Call", fn, resilience.Order(), resilience.Order(retry.Layer))
	requireCode(t, err, r4c.BadOrder)
}
