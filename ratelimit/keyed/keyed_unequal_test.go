package keyed_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
)

// assertBadKey asserts that err refuses a key that is not equal to itself: a
// *policy.ConfigError with "R4C-RLM-001", not a rate-limit rejection.
func assertBadKey(t *testing.T, err error, msg string) {
	t.Helper()
	require.Error(t, err, msg)
	assert.Equal(t, "R4C-RLM-001", r4c.CodeOf(err), msg)
	assert.NotErrorIs(t, err, ratelimit.ErrExceeded, msg)
}

// SPEC RL-28: a NaN key, which no call could find again, is refused by every call, takes
// no MaxKeys place and is never let through: with 1 permit per hour, 50 calls with NaN
// keys pass none (each used to get a fresh cell with a full burst).
func TestKeyed_RL28_NaNKeysAreRefused(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[float64](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Hour), ratelimit.MaxWait(time.Minute))
	passed := 0
	for range 50 {
		if k.TryAcquire(math.NaN(), 1) == nil {
			passed++
		}
	}
	assert.Zero(t, passed, "no call with a NaN key passes")
	assert.Zero(t, k.Len(), "and none takes a place")

	assertBadKey(t, k.TryAcquire(math.NaN(), 1), "TryAcquireN")
	r, err := k.Reserve(math.NaN(), 1)
	assertBadKey(t, err, "Reserve")
	assert.Equal(t, ratelimit.Reservation{}, r, "nothing reserved")
	_, err = k.Reserve(math.NaN(), 1)
	assertBadKey(t, err, "ReserveN")
	assertBadKey(t, k.Acquire(context.Background(), math.NaN(), 1), "Acquire")
	assertBadKey(t, k.Acquire(context.Background(), math.NaN(), 1), "AcquireN")
	d := k.Decide(context.Background(), math.NaN())
	assert.Equal(t, keyed.Decision{Limit: 1, Period: time.Hour}, d, "Decide refuses, with no retry-after to tell")
	assert.Zero(t, keyed.AvailablePermits(k, math.NaN()), "a NaN key can take no permit")
	assert.Zero(t, k.Len())

	assert.True(t, k.TryAcquire(1.5, 1) == nil, "keys equal to themselves are limited as before")
	assert.False(t, k.TryAcquire(1.5, 1) == nil)
	assert.True(t, k.TryAcquire(math.Inf(1), 1) == nil)
	assert.Equal(t, 2, k.Len())
}

// nanPair is a key type that holds a float in a field.
type nanPair struct {
	Client string
	Score  float64
}

// SPEC RL-28: keys that hold a NaN in a field, an element or an interface, and interface
// keys holding a value that cannot be compared, are refused with CodeBadKey, not a panic.
func TestKeyed_RL28_KeysHoldingNaNOrUncomparableValuesAreRefused(t *testing.T) {
	clk := clock.NewManual()
	opts := []ratelimit.Option{ratelimit.Permits(1), ratelimit.Period(time.Hour)}

	pairs := newKeyed[nanPair](t, clk, opts...)
	assertBadKey(t, pairs.TryAcquire(nanPair{"a", math.NaN()}, 1), "NaN in a struct field")
	require.NoError(t, pairs.TryAcquire(nanPair{"a", 1}, 1))
	assert.False(t, pairs.TryAcquire(nanPair{"a", 1}, 1) == nil)

	arrays := newKeyed[[2]float32](t, clk, opts...)
	assertBadKey(t, arrays.TryAcquire([2]float32{1, float32(math.NaN())}, 1), "NaN in an array element")
	require.NoError(t, arrays.TryAcquire([2]float32{1, 2}, 1))

	complexes := newKeyed[complex128](t, clk, opts...)
	assertBadKey(t, complexes.TryAcquire(complex(0, math.NaN()), 1), "NaN in a complex")

	anys := newKeyed[any](t, clk, opts...)
	for name, key := range map[string]any{
		"NaN":                   math.NaN(),
		"float32 NaN":           float32(math.NaN()),
		"NaN in a struct":       nanPair{"a", math.NaN()},
		"NaN in a nested any":   [1]any{math.NaN()},
		"an uncomparable slice": []byte("a"),
		"a map":                 map[string]int{},
		"a slice in an array":   [1]any{[]int{1}},
	} {
		assertBadKey(t, anys.TryAcquire(key, 1), name)
		assert.False(t, anys.TryAcquire(key, 1) == nil, name)
		_, err := anys.Reserve(key, 1)
		assertBadKey(t, err, name)
		assert.Zero(t, keyed.AvailablePermits(anys, key), name)
		assert.False(t, anys.Decide(context.Background(), key).Admitted, name)
	}
	assert.Zero(t, anys.Len())
	assert.True(t, anys.TryAcquire(nanPair{"a", 1}, 1) == nil)
	assert.False(t, anys.TryAcquire(nanPair{"a", 1}, 1) == nil)
	assert.True(t, anys.TryAcquire(nil, 1) == nil, "a nil interface is a key like any other")
	assert.False(t, anys.TryAcquire(nil, 1) == nil)
}

// SPEC RL-28: the refusal of a bad key is published and recorded as a rejection, with the
// error and the key as fmt.Sprint names it.
func TestKeyed_RL28_BadKeyRefusalIsObserved(t *testing.T) {
	clk := clock.NewManual()
	var events []policy.Event
	k := newKeyed[float64](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Hour),
		ratelimit.OnEvent(func(e policy.Event) { events = append(events, e) }))
	assert.False(t, k.TryAcquire(math.NaN(), 1) == nil)
	require.Len(t, events, 1)
	assert.Equal(t, ratelimit.EventRejected, events[0].Kind)
	assert.Equal(t, "NaN", events[0].Key)
	assert.Equal(t, "R4C-RLM-001", r4c.CodeOf(events[0].Err))
}

// SPEC RL-28, RL-6: key types that cannot hold a NaN pay nothing for the check; a float
// key equal to itself allocates nothing either.
func TestKeyed_RL28_CheckAllocatesNothing(t *testing.T) {
	clk := clock.NewManual()
	opts := []ratelimit.Option{ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second)}
	ints := newKeyed[int](t, clk, opts...)
	floats := newKeyed[float64](t, clk, opts...)
	pairs := newKeyed[nanPair](t, clk, opts...)
	_ = ints.TryAcquire(7, 1)
	_ = floats.TryAcquire(1.5, 1)
	_ = pairs.TryAcquire(nanPair{"a", 1}, 1)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = ints.TryAcquire(7, 1) }), "int key")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = floats.TryAcquire(1.5, 1) }), "float key")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { pairs.Decide(context.Background(), nanPair{"a", 1}) }), "struct key with a float")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = floats.Reserve(1.5, 1) }), "Reserve with a float key")
}
