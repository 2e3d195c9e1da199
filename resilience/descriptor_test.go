package resilience

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/retry"
)

// A toy policy, written as a policy package would be: it admits at most Limit calls in
// all, then rejects. Everything below toyRow is what its own package would hold; toyRow
// is the one row a new policy adds to the layer table.

const layerToy policy.Layer = "toy"

const toyRejected policy.EventKind = 1000

var errToyFull = errors.New("toy: limit reached")

type toyConfig struct{ Limit int }

type toySettings struct {
	toyConfig
	contract.Common
}

type toyOption func(*toySettings)

func toyLimit(n int) toyOption { return func(s *toySettings) { s.Limit = n } }

func toyName(name string) toyOption { return contract.Name[toySettings](name) }

type toy struct {
	cfg    toyConfig
	events contract.Events
	used   atomic.Int64
}

type toySnapshot struct {
	Instance    string
	Used, Limit int
}

func (t *toy) InstanceID() string { return t.events.ID }

func (t *toy) admit() bool {
	if t.used.Add(1) <= int64(t.cfg.Limit) {
		return true
	}
	t.used.Add(-1)
	t.events.Publish(policy.Event{Kind: toyRejected, Err: errToyFull})
	return false
}

var toyDescriptor = &contract.Descriptor[toySettings]{
	L:        layerToy,
	Attrs:    []contract.Attr[toySettings]{contract.IntAttr("limit", func(s *toySettings) *int { return &s.Limit })},
	Defaults: func() toySettings { return toySettings{toyConfig: toyConfig{Limit: 1}} },
	Common:   func(s *toySettings) *contract.Common { return &s.Common },
	Config:   func(s *toySettings) any { return s.toyConfig },
	Build: func(s toySettings) (contract.Instance, error) {
		if s.Limit < 0 {
			return nil, r4c.Errorf(r4c.OutOfRange, "toy.limit", "", "negative")
		}
		return &toy{cfg: s.toyConfig, events: s.EventsOf("toy", s.ID("toy"))}, nil
	},
	Of: func(p contract.Instance) any { return p.(*toy).cfg },
	State: func(p contract.Instance) any {
		t := p.(*toy)
		return toySnapshot{Instance: t.InstanceID(), Used: int(t.used.Load()), Limit: t.cfg.Limit}
	},
}

func toyDecorate[A, T any](t *toy, next decorate.Func[A, T]) decorate.Func[A, T] {
	return func(ctx context.Context, a A) (T, error) {
		if !t.admit() {
			var zero T
			return zero, errToyFull
		}
		return next(ctx, a)
	}
}

func toyDecorateAsync[A, T any](t *toy, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	return func(ctx context.Context, a A) *async.Future[T] {
		if !t.admit() {
			return async.Failed[T](errToyFull)
		}
		return next(ctx, a)
	}
}

func toySpec(opts ...toyOption) Spec { return policyOf(opts) }

// toyRow is the toy's row of the layer table.
func toyRow[A, T any]() []layerRow[A, T] {
	return []layerRow[A, T]{row(layerToy, toyDecorate[A, T], toyDecorateAsync[A, T])}
}

// A new policy joins through its descriptor and one row of the layer table: its
// configuration keys (every scope, env names, did-you-mean), instances shared by name,
// the shared-name check, handles, snapshots, events, the order and async calls all work
// with nothing else added.
func TestDescriptor_NewPolicyThroughOneRow(t *testing.T) {
	unregister := contract.Register(toyDescriptor)
	defer unregister()

	env, err := FromEnviron([]string{"R4C_CONFIGS_small_TOY_LIMIT=3"})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"configs.small.toy.limit": "3"}, env)

	var events []policy.Event
	clk := clock.NewManual()
	reg, err := NewRegistry(WithClock(clk), WithProperties(env), WithProperties(map[string]string{
		"defaults.toy.limit":                   "5",
		"instances.Toy.Call.toy.limit":         "2",
		"instances.Toy.Call.composition.order": "toy, retry",
	}), WithEventListener(func(e policy.Event) { events = append(events, e) }))
	require.NoError(t, err)

	calls := 0
	call, err := wrapSync(reg, "Toy.Call", func(context.Context, struct{}) (string, error) { calls++; return "ok", nil },
		[]Spec{toySpec(toyLimit(10)), Retry(retry.MaxAttempts(2), retry.Delay(0), retry.AbortOn(errToyFull))},
		toyRow[struct{}, string]())
	require.NoError(t, err)
	for range 2 {
		v, err := call(context.Background(), struct{}{})
		require.NoError(t, err)
		assert.Equal(t, "ok", v)
	}
	_, err = call(context.Background(), struct{}{})
	require.ErrorIs(t, err, errToyFull, "instances.<id> wins over code and defaults: limit 2")
	assert.Equal(t, 2, calls)
	require.Len(t, events, 1)
	assert.Equal(t, policy.Event{Kind: toyRejected, Instance: "Toy.Call", Err: errToyFull}, events[0])

	// An async function, sharing a toy by name, with its limit from configs.small.
	other, err := wrapAsync(reg, "Toy.Other", func(context.Context, int) *async.Future[int] { return async.Completed(7) },
		[]Spec{toySpec(toyName("shared"), func(s *toySettings) { s.ConfigName = "small" })}, toyRow[int, int]())
	require.NoError(t, err)
	for range 3 {
		v, err := other(context.Background(), 1).Await(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 7, v)
	}
	_, err = other(context.Background(), 1).Await(context.Background())
	require.ErrorIs(t, err, errToyFull)

	h, err := Lookup[*toy](reg, layerToy, "shared")
	require.NoError(t, err)
	assert.Equal(t, 3, h.cfg.Limit)
	var toys []toySnapshot
	for _, p := range reg.Snapshot().Policies {
		if p.Layer == layerToy {
			toys = append(toys, p.State.(toySnapshot))
		}
	}
	assert.Equal(t, []toySnapshot{{"Toy.Call", 2, 2}, {"shared", 3, 3}}, toys)
	assert.Empty(t, reg.UnusedKeys())

	// Sharing the name with another configuration is the usual conflict.
	_, err = wrapSync(reg, "Toy.Third", func(context.Context, struct{}) (int, error) { return 0, nil },
		[]Spec{toySpec(toyName("shared"), toyLimit(9))}, toyRow[struct{}, int]())
	assert.Equal(t, r4c.Conflict, r4c.CodeOf(err))

	// A typo in its key is refused like any other, with the closest key suggested.
	_, err = NewRegistry(WithProperties(map[string]string{"defaults.toy.limt": "1"}))
	require.Equal(t, r4c.UnknownKey, r4c.CodeOf(err))
	assert.Contains(t, err.Error(), "did you mean defaults.toy.limit?")
	_, err = NewRegistry(WithProperties(map[string]string{"defaults.toy.limit": "many"}))
	assert.Equal(t, r4c.BadNumber, r4c.CodeOf(err))
}

// Without its row, a registered policy cannot be composed: the wrap fails with
// R4C-REG-010 instead of leaving the layer out.
func TestDescriptor_LayerWithoutRowIsRefused(t *testing.T) {
	unregister := contract.Register(toyDescriptor)
	defer unregister()
	reg, err := NewRegistry()
	require.NoError(t, err)
	_, err = Wrap(reg, "Toy.Call", func(context.Context) (int, error) { return 0, nil }, toySpec())
	assert.Equal(t, r4c.BadSpec, r4c.CodeOf(err))
	assert.Empty(t, reg.Snapshot().Policies, "a failed wrap registers nothing")
}
