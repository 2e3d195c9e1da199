package resilience_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// lookup returns the instance of layer l with this id, as a P, or fails the test.
func lookup[P any](t testing.TB, reg *resilience.Registry, l policy.Layer, id string) P {
	t.Helper()
	p, err := resilience.Lookup[P](reg, l, id)
	require.NoError(t, err)
	return p
}

// with returns a copy of props with the keys of more added (or replaced).
func with(props map[string]string, more map[string]string) map[string]string {
	out := maps.Clone(props)
	maps.Copy(out, more)
	return out
}

// without returns a copy of props without the keys that start with prefix.
func without(props map[string]string, prefix string) map[string]string {
	out := maps.Clone(props)
	maps.DeleteFunc(out, func(k, _ string) bool { return strings.HasPrefix(k, prefix) })
	return out
}

func ok(context.Context) (string, error) { return "ok", nil }

// changes returns the Changed of each ConfigChanged event recorded, by instance id, in
// the order they were published.
func changes(rec *contracttest.Recorder) map[string][][]string {
	out := map[string][][]string{}
	for _, e := range rec.Of(policy.ConfigChanged) {
		out[e.Instance] = append(out[e.Instance], e.Changed)
	}
	return out
}

// SPEC RC-6, RC-1: a reload changes a running limiter's rate from its next call: at
// 10/1s, once the burst is spent, the next permit is 100ms away; reloaded to 20/1s, it
// is 50ms away, and the calls that follow are spaced 50ms apart.
func TestRC6_ReloadChangesARunningLimitersRate(t *testing.T) {
	var rec contracttest.Recorder
	props := map[string]string{
		"instances.Search.rateLimiter.permits": "10",
		"instances.Search.rateLimiter.period":  "1s",
	}
	reg, clk := newRegistry(t, resilience.WithProperties(props), resilience.WithEventListener(rec.Listen))
	search, err := resilience.Wrap(reg, "Search", ok, resilience.RateLimiter())
	require.NoError(t, err)
	ctx := context.Background()
	for range 10 {
		_, err := search(ctx)
		require.NoError(t, err)
	}
	_, err = search(ctx)
	require.ErrorIs(t, err, ratelimit.ErrExceeded, "the burst of 10 is spent")

	require.NoError(t, reg.Reload(with(props, map[string]string{"instances.Search.rateLimiter.permits": "20"})))
	lim := lookup[*ratelimit.Limiter](t, reg, ratelimit.Layer, "Search")
	assert.Equal(t, ratelimit.Config{Permits: 20, Period: time.Second}, lim.Config())

	clk.Advance(50 * time.Millisecond)
	_, err = search(ctx)
	require.NoError(t, err, "50ms is the new spacing; the old one needed 100ms")
	_, err = search(ctx)
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	clk.Advance(50 * time.Millisecond)
	_, err = search(ctx)
	require.NoError(t, err)
	_, err = search(ctx)
	require.ErrorIs(t, err, ratelimit.ErrExceeded)

	assert.Equal(t, map[string][][]string{"Search": {{"permits"}}}, changes(&rec))
}

// SPEC RC-6: a reload changes a running breaker's failure rate threshold: the breaker
// reloaded from 50% to 75% stays closed at a 50% failure rate, where its twin, not
// reloaded, opens.
func TestRC6_ReloadChangesARunningBreakersThreshold(t *testing.T) {
	props := map[string]string{
		"defaults.circuitBreaker.slidingWindowSize":    "4",
		"defaults.circuitBreaker.minimumCalls":         "4",
		"defaults.circuitBreaker.failureRateThreshold": "50",
	}
	reg, _ := newRegistry(t, resilience.WithProperties(props))
	boom := errors.New("boom")
	calls := map[string]func(context.Context, bool) (string, error){}
	for _, id := range []string{"Reloaded", "Twin"} {
		fn, err := resilience.Wrap1(reg, id, func(_ context.Context, fail bool) (string, error) {
			if fail {
				return "", boom
			}
			return "ok", nil
		}, resilience.CircuitBreaker())
		require.NoError(t, err)
		calls[id] = fn
	}
	require.NoError(t, reg.Reload(with(props, map[string]string{"instances.Reloaded.circuitBreaker.failureRateThreshold": "75"})))
	assert.InDelta(t, 75, lookup[*circuitbreaker.Breaker](t, reg, circuitbreaker.Layer, "Reloaded").Config().FailureRateThreshold, 0)
	assert.InDelta(t, 50, lookup[*circuitbreaker.Breaker](t, reg, circuitbreaker.Layer, "Twin").Config().FailureRateThreshold, 0)

	ctx := context.Background()
	for _, call := range calls {
		for _, fail := range []bool{true, false, true, false} {
			_, _ = call(ctx, fail)
		}
	}
	assert.Equal(t, circuitbreaker.Closed, lookup[*circuitbreaker.Breaker](t, reg, circuitbreaker.Layer, "Reloaded").Snapshot().State)
	assert.Equal(t, circuitbreaker.Open, lookup[*circuitbreaker.Breaker](t, reg, circuitbreaker.Layer, "Twin").Snapshot().State)
}

// SPEC RC-6: a reload raises a running bulkhead's maxConcurrent: a second call in
// flight, rejected before, is let in after.
func TestRC6_ReloadChangesARunningBulkheadsMaxConcurrent(t *testing.T) {
	props := map[string]string{"instances.Pool.bulkhead.maxConcurrent": "1"}
	reg, _ := newRegistry(t, resilience.WithProperties(props))
	calls := contracttest.NewCalls()
	call, err := resilience.WrapAsync1(reg, "Pool", calls.Next, resilience.Bulkhead())
	require.NoError(t, err)
	ctx := context.Background()
	first := call(ctx, 1)
	_, err = call(ctx, 2).Await(ctx)
	require.ErrorIs(t, err, bulkhead.ErrFull)

	require.NoError(t, reg.Reload(map[string]string{"instances.Pool.bulkhead.maxConcurrent": "2"}))
	third := call(ctx, 3)
	_, err = call(ctx, 4).Await(ctx)
	require.ErrorIs(t, err, bulkhead.ErrFull, "two calls in flight: the bulkhead is full again")
	assert.Equal(t, []int{1, 3}, calls.Started())
	bh := lookup[*bulkhead.Bulkhead](t, reg, bulkhead.Layer, "Pool")
	assert.Equal(t, 2, bh.Snapshot().MaxConcurrent)

	calls.Finish(1)
	calls.Finish(3)
	for _, f := range []*async.Future[string]{first, third} {
		_, err := f.Await(ctx)
		require.NoError(t, err)
	}
	assert.Equal(t, 2, bh.Snapshot().AvailableSlots)
}

// SPEC RC-6: a reload changes a running retry's maxAttempts: a call that always fails
// is tried 3 times, then 5.
func TestRC6_ReloadChangesARunningRetrysMaxAttempts(t *testing.T) {
	props := map[string]string{"instances.Flaky.retry.maxAttempts": "3", "instances.Flaky.retry.delay": "0s"}
	reg, _ := newRegistry(t, resilience.WithProperties(props))
	var attempts atomic.Int32
	call, err := resilience.Wrap(reg, "Flaky", func(context.Context) (string, error) {
		attempts.Add(1)
		return "", errors.New("down")
	}, resilience.Retry())
	require.NoError(t, err)
	ctx := context.Background()
	_, err = call(ctx)
	require.Error(t, err)
	assert.EqualValues(t, 3, attempts.Swap(0))

	require.NoError(t, reg.Reload(with(props, map[string]string{"instances.Flaky.retry.maxAttempts": "5"})))
	_, err = call(ctx)
	require.Error(t, err)
	assert.EqualValues(t, 5, attempts.Load())
}

// SPEC RC-6: a reload changes a running timeout's duration, for the calls that start
// after it: a call started before keeps its 1s, one started after times out at 100ms.
func TestRC6_ReloadChangesARunningTimeoutsDuration(t *testing.T) {
	reg, clk := newRegistry(t)
	calls := contracttest.NewCalls()
	call, err := resilience.WrapAsync1(reg, "Slow", calls.Next, resilience.Timeout(time.Second))
	require.NoError(t, err)
	ctx := context.Background()
	before := call(ctx, 1)

	require.NoError(t, reg.Reload(map[string]string{"instances.Slow.timeout.duration": "100ms"}))
	after := call(ctx, 2)
	clk.Advance(100 * time.Millisecond)
	_, done, err := after.Result()
	require.True(t, done, "the call started after the reload has 100ms")
	require.ErrorIs(t, err, timeout.ErrTimeout)
	_, done, _ = before.Result()
	require.False(t, done, "the call started before the reload keeps its 1s")
	clk.Advance(900 * time.Millisecond)
	_, done, err = before.Result()
	require.True(t, done)
	require.ErrorIs(t, err, timeout.ErrTimeout)
	calls.Finish(1)
	calls.Finish(2)
}

// fixture is a registry with every kind of policy running, built from base.
type fixture struct {
	reg   *resilience.Registry
	rec   *contracttest.Recorder
	props map[string]string
}

// base is the fixture's configuration keys.
var base = map[string]string{
	"defaults.rateLimiter.period":                           "1s",
	"instances.Svc.Get.rateLimiter.permits":                 "10",
	"instances.Svc.Get.circuitBreaker.failureRateThreshold": "50",
	"instances.Svc.Get.bulkhead.maxConcurrent":              "5",
	"configs.pool.bulkhead.maxWait":                         "0s",
	"instances.Svc.Get.retry.maxAttempts":                   "3",
	"instances.Svc.Get.retry.delay":                         "0s",
	"instances.Svc.Get.timeout.duration":                    "1s",
	"instances.Svc.Price.hedge.delay":                       "100ms",
	"instances.Svc.Adapt.adaptiveLimit.maxLimit":            "50",
}

// good is a valid change of every instance of the fixture that can change live, and of
// the defaults that instances built later use.
var good = map[string]string{
	"defaults.rateLimiter.period":                           "2s",
	"instances.Svc.Get.rateLimiter.permits":                 "20",
	"instances.Svc.Get.circuitBreaker.failureRateThreshold": "75",
	"instances.Svc.Get.bulkhead.maxConcurrent":              "8",
	"instances.Svc.Get.retry.maxAttempts":                   "5",
	"instances.Svc.Get.timeout.duration":                    "2s",
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{rec: &contracttest.Recorder{}, props: base}
	f.reg, _ = newRegistry(t, resilience.WithProperties(base), resilience.WithEventListener(f.rec.Listen))
	_, err := resilience.Wrap(f.reg, "Svc.Get", ok,
		resilience.Fallback(func(context.Context, error) (string, error) { return "fallback", nil }),
		resilience.Retry(), resilience.CircuitBreaker(), resilience.RateLimiter(),
		resilience.Timeout(time.Second), resilience.Bulkhead(bulkhead.UseConfig("pool")))
	require.NoError(t, err)
	_, err = resilience.WrapAsync(f.reg, "Svc.Price", func(ctx context.Context) *async.Future[string] { return async.Go(ctx, ok) },
		resilience.Hedge())
	require.NoError(t, err)
	_, err = resilience.Wrap(f.reg, "Svc.Adapt", ok, resilience.AdaptiveLimit())
	require.NoError(t, err)
	return f
}

// configs returns the configuration of every instance of the fixture (the hedge's
// snapshot, which holds its settings).
func (f *fixture) configs(t *testing.T) map[string]any {
	t.Helper()
	return map[string]any{
		"rateLimiter":    lookup[*ratelimit.Limiter](t, f.reg, ratelimit.Layer, "Svc.Get").Config(),
		"circuitBreaker": lookup[*circuitbreaker.Breaker](t, f.reg, circuitbreaker.Layer, "Svc.Get").Config(),
		"bulkhead":       lookup[*bulkhead.Bulkhead](t, f.reg, bulkhead.Layer, "Svc.Get").Config(),
		"retry":          lookup[*retry.Retry](t, f.reg, retry.Layer, "Svc.Get").Config(),
		"timeout":        lookup[*timeout.Timeout](t, f.reg, timeout.Layer, "Svc.Get").Config(),
		"hedge":          lookup[*hedge.Hedge](t, f.reg, hedge.Layer, "Svc.Price").Snapshot(),
		"adaptiveLimit":  lookup[*adaptivelimit.Limiter](t, f.reg, adaptivelimit.Layer, "Svc.Adapt").Config(),
	}
}

// newLimiterPeriod wraps a new function, id, with a limiter of 3 permits, and returns the
// period its limiter resolves: defaults.rateLimiter.period.
func (f *fixture) newLimiterPeriod(t *testing.T, id string) time.Duration {
	t.Helper()
	_, err := resilience.Wrap(f.reg, id, ok, resilience.RateLimiter(ratelimit.Permits(3)))
	require.NoError(t, err)
	return lookup[*ratelimit.Limiter](t, f.reg, ratelimit.Layer, id).Config().Period
}

// SPEC RC-5: a reload with one bad key, among good changes of every instance, returns the
// error with its code and whole key, and changes nothing: no instance's configuration, no
// event, and an instance built afterwards still resolves the old keys. The same reload
// without the bad key then applies.
func TestRC5_OneBadKeyChangesNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys map[string]string
		drop string // a prefix of keys to remove
		code string
		key  string
	}{
		{name: "unknown key", keys: map[string]string{"instances.Svc.Get.rateLimiter.permit": "5"},
			code: r4c.UnknownKey, key: "instances.Svc.Get.rateLimiter.permit"},
		{name: "bad syntax", keys: map[string]string{"instances.Svc.Get.timeout.duration": "2 parsecs"},
			code: r4c.BadDuration, key: "instances.Svc.Get.timeout.duration"},
		{name: "out of range for an instance", keys: map[string]string{"instances.Svc.Get.rateLimiter.permits": "0"},
			code: r4c.BadPermits, key: "instances.Svc.Get.rateLimiter.permits"},
		{name: "out of range in defaults", keys: map[string]string{"defaults.retry.multiplier": "0.5"},
			code: r4c.OutOfRange, key: "defaults.retry.multiplier"},
		{name: "a required key removed", drop: "instances.Svc.Get.rateLimiter.permits",
			code: r4c.BadPermits, key: "instances.Svc.Get.rateLimiter.permits"},
		{name: "a configuration a spec selects removed", drop: "configs.pool.",
			code: r4c.UnknownConfig, key: "bulkhead.useConfig"},
		{name: "a configuration a spec selects left with another policy's keys only", drop: "configs.pool.bulkhead.",
			keys: map[string]string{"configs.pool.retry.maxAttempts": "2"},
			code: r4c.UnknownConfig, key: "bulkhead.useConfig"},
		{name: "a setting the policy cannot change live", keys: map[string]string{"instances.Svc.Get.bulkhead.enabled": "false"},
			code: r4c.NotLive, key: "instances.Svc.Get.bulkhead.enabled"},
		{name: "a breaker's window type", keys: map[string]string{"defaults.circuitBreaker.slidingWindowType": "TIME_BASED"},
			code: r4c.NotLive, key: "defaults.circuitBreaker.slidingWindowType"},
		{name: "a hedge", keys: map[string]string{"instances.Svc.Price.hedge.delay": "200ms"},
			code: r4c.NotLive, key: "instances.Svc.Price.hedge.delay"},
		{name: "an adaptive limit", keys: map[string]string{"defaults.adaptiveLimit.minLimit": "2"},
			code: r4c.NotLive, key: "defaults.adaptiveLimit.minLimit"},
		{name: "a fallback", keys: map[string]string{"instances.Svc.Get.fallback.enabled": "false"},
			code: r4c.NotLive, key: "instances.Svc.Get.fallback.enabled"},
		{name: "the order of a composition", keys: map[string]string{"instances.Svc.Get.composition.order": "timeout, retry"},
			code: r4c.NotLive, key: "instances.Svc.Get.composition.order"},
		{name: "the default order", keys: map[string]string{"defaults.composition.order": "timeout, retry"},
			code: r4c.NotLive, key: "defaults.composition.order"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			before := f.configs(t)
			unused := f.reg.UnusedKeys()
			bad := with(with(f.props, good), tc.keys)
			if tc.drop != "" {
				bad = without(bad, tc.drop)
			}

			err := f.reg.Reload(bad)
			ce := requireCode(t, err, tc.code)
			assert.Equal(t, tc.key, ce.Key)
			assert.Equal(t, before, f.configs(t), "no instance changed")
			assert.Empty(t, f.rec.Of(policy.ConfigChanged), "no event")
			assert.Equal(t, unused, f.reg.UnusedKeys())
			assert.Equal(t, time.Second, f.newLimiterPeriod(t, "Svc.New"), "an instance built after the failed reload resolves the old keys")

			require.NoError(t, f.reg.Reload(with(f.props, good)), "the same reload without the bad key")
			after := f.configs(t)
			assert.NotEqual(t, before["rateLimiter"], after["rateLimiter"])
			assert.Equal(t, 2*time.Second, f.newLimiterPeriod(t, "Svc.Newer"))
		})
	}
}

// SPEC RC-5, RC-6: what a good reload changes in the fixture, and the events it
// publishes, one per instance changed, naming the attributes that changed. The hedge and
// the adaptive limit, whose keys do not change, keep their configuration.
func TestRC6_AGoodReloadChangesEveryLiveInstance(t *testing.T) {
	f := newFixture(t)
	before := f.configs(t)
	require.NoError(t, f.reg.Reload(with(f.props, good)))
	after := f.configs(t)

	assert.Equal(t, ratelimit.Config{Permits: 20, Period: 2 * time.Second}, after["rateLimiter"])
	assert.InDelta(t, 75, after["circuitBreaker"].(circuitbreaker.Config).FailureRateThreshold, 0)
	assert.Equal(t, 8, after["bulkhead"].(bulkhead.Config).MaxConcurrent)
	assert.Equal(t, 5, after["retry"].(retry.Config).MaxAttempts)
	assert.Equal(t, 2*time.Second, after["timeout"].(timeout.Config).Duration)
	assert.Equal(t, before["hedge"], after["hedge"])
	assert.Equal(t, before["adaptiveLimit"], after["adaptiveLimit"])

	got := changes(f.rec)["Svc.Get"]
	assert.ElementsMatch(t, [][]string{{"period", "permits"}, {"failureRateThreshold"}, {"maxConcurrent"}, {"maxAttempts"}, {"duration"}}, got)
	assert.Len(t, f.rec.Of(policy.ConfigChanged), 5)

	// The same keys again change nothing and publish nothing.
	require.NoError(t, f.reg.Reload(with(f.props, good)))
	assert.Equal(t, after, f.configs(t))
	assert.Len(t, f.rec.Of(policy.ConfigChanged), 5)
}

// SPEC RC-5: a reload that would give a shared name two configurations is R4C-REG-008
// and changes nothing; a reload that changes both of its sources alike applies.
func TestRC5_SharedNameWithTwoConfigurationsChangesNothing(t *testing.T) {
	props := map[string]string{
		"configs.a.rateLimiter.permits": "5",
		"configs.a.rateLimiter.period":  "1s",
		"configs.b.rateLimiter.permits": "5",
		"configs.b.rateLimiter.period":  "1s",
	}
	var rec contracttest.Recorder
	reg, _ := newRegistry(t, resilience.WithProperties(props), resilience.WithEventListener(rec.Listen))
	for id, config := range map[string]string{"Geo.Code": "a", "Geo.Reverse": "b"} {
		_, err := resilience.Wrap(reg, id, ok, resilience.RateLimiter(ratelimit.Name("geo"), ratelimit.UseConfig(config)))
		require.NoError(t, err)
	}
	lim := lookup[*ratelimit.Limiter](t, reg, ratelimit.Layer, "geo")

	err := reg.Reload(with(props, map[string]string{"configs.a.rateLimiter.permits": "6"}))
	ce := requireCode(t, err, r4c.Conflict)
	assert.Equal(t, "configs.a.rateLimiter.permits", ce.Key, "the whole key of the reload that makes them differ")
	assert.Equal(t, "6", ce.Value)
	assert.Contains(t, ce.Reason, `functions that share the rateLimiter geo would resolve different configurations`)
	assert.Contains(t, ce.Reason, "Permits: ")

	// A key of defaults that one function's code overrides and the other's does not.
	reg2, _ := newRegistry(t)
	_, err = resilience.Wrap(reg2, "A", ok, resilience.Retry(retry.Name("r"), retry.MaxAttempts(3)))
	require.NoError(t, err)
	_, err = resilience.Wrap(reg2, "B", ok, resilience.Retry(retry.Name("r")))
	require.NoError(t, err)
	err = reg2.Reload(map[string]string{"defaults.retry.maxAttempts": "5"})
	ce = requireCode(t, err, r4c.Conflict)
	assert.Equal(t, "defaults.retry.maxAttempts", ce.Key)
	assert.Equal(t, "5", ce.Value)

	// Of two keys the reload changes, the one without which they would agree: both take
	// the new permits, only B the new period (A sets its period in code).
	both := map[string]string{"defaults.rateLimiter.permits": "5", "defaults.rateLimiter.period": "1s"}
	reg3, _ := newRegistry(t, resilience.WithProperties(both))
	_, err = resilience.Wrap(reg3, "A", ok, resilience.RateLimiter(ratelimit.Name("geo"), ratelimit.Period(time.Second)))
	require.NoError(t, err)
	_, err = resilience.Wrap(reg3, "B", ok, resilience.RateLimiter(ratelimit.Name("geo")))
	require.NoError(t, err)
	err = reg3.Reload(map[string]string{"defaults.rateLimiter.permits": "6", "defaults.rateLimiter.period": "2s"})
	ce = requireCode(t, err, r4c.Conflict)
	assert.Equal(t, "defaults.rateLimiter.period", ce.Key)
	assert.Equal(t, "2s", ce.Value)
	assert.Equal(t, 5, lim.Config().Permits)
	assert.Empty(t, rec.Of(policy.ConfigChanged))
	_, err = resilience.Wrap(reg, "Geo.Other", ok, resilience.RateLimiter(ratelimit.Name("geo"), ratelimit.UseConfig("a")))
	require.NoError(t, err, "the keys in force are still the old ones")

	require.NoError(t, reg.Reload(with(props, map[string]string{"configs.a.rateLimiter.permits": "6", "configs.b.rateLimiter.permits": "6"})))
	assert.Equal(t, 6, lim.Config().Permits)
	assert.Equal(t, map[string][][]string{"geo": {{"permits"}}}, changes(&rec))
}

// SPEC RC-6: a function wrapped after a reload resolves the new keys, and may share an
// instance changed by the reload; options in code keep their place in the precedence:
// they win over defaults.* keys and lose to configs.<name>.* and instances.<id>.* keys,
// as when the instance was built.
func TestRC6_AfterAReloadNewFunctionsResolveTheNewKeys(t *testing.T) {
	props := map[string]string{"defaults.rateLimiter.permits": "5", "defaults.rateLimiter.period": "1s"}
	reg, _ := newRegistry(t, resilience.WithProperties(props))
	_, err := resilience.Wrap(reg, "A", ok, resilience.RateLimiter(ratelimit.Name("shared")))
	require.NoError(t, err)
	_, err = resilience.Wrap(reg, "Coded", ok, resilience.RateLimiter(ratelimit.Permits(3)))
	require.NoError(t, err)

	require.NoError(t, reg.Reload(with(props, map[string]string{"defaults.rateLimiter.permits": "7"})))
	shared := lookup[*ratelimit.Limiter](t, reg, ratelimit.Layer, "shared")
	coded := lookup[*ratelimit.Limiter](t, reg, ratelimit.Layer, "Coded")
	assert.Equal(t, 7, shared.Config().Permits)
	assert.Equal(t, 3, coded.Config().Permits, "the option in code wins over defaults.*, as at build")

	_, err = resilience.Wrap(reg, "B", ok, resilience.RateLimiter(ratelimit.Name("shared")))
	require.NoError(t, err, "a function wrapped after the reload resolves 7 too, and shares the instance")
	_, err = resilience.Wrap(reg, "C", ok, resilience.RateLimiter())
	require.NoError(t, err)
	assert.Equal(t, 7, lookup[*ratelimit.Limiter](t, reg, ratelimit.Layer, "C").Config().Permits)

	require.NoError(t, reg.Reload(with(props, map[string]string{"instances.Coded.rateLimiter.permits": "9"})))
	assert.Equal(t, 9, coded.Config().Permits, "instances.<id>.* wins over the option in code, as at build")
	assert.Equal(t, 5, shared.Config().Permits, "and A, B and C are back to 5")
}

// SPEC RC-5: a failed wrap leaves nothing a reload would resolve again: a function whose
// wrap failed on a shared name with another configuration does not make a later reload
// fail.
func TestRC5_AFailedWrapLeavesNothingToReload(t *testing.T) {
	props := map[string]string{"configs.a.rateLimiter.permits": "5", "configs.a.rateLimiter.period": "1s"}
	reg, _ := newRegistry(t, resilience.WithProperties(props))
	_, err := resilience.Wrap(reg, "One", ok, resilience.RateLimiter(ratelimit.Name("shared"), ratelimit.UseConfig("a")))
	require.NoError(t, err)
	_, err = resilience.Wrap(reg, "Two", ok, resilience.RateLimiter(ratelimit.Name("shared"), ratelimit.Permits(6), ratelimit.Period(time.Second)))
	requireCode(t, err, r4c.Conflict)

	require.NoError(t, reg.Reload(with(props, map[string]string{"configs.a.rateLimiter.permits": "6"})),
		"only One resolves the instance: Two's wrap failed")
	assert.Equal(t, 6, lookup[*ratelimit.Limiter](t, reg, ratelimit.Layer, "shared").Config().Permits)
}

// SPEC RC-6: properties, YAML and environment sources each reload a registry; several
// sources merge, the later winning.
func TestRC6_ReloadFromPropertiesYAMLAndEnv(t *testing.T) {
	reg, _ := newRegistry(t, resilience.WithProperties(map[string]string{
		"instances.Svc.Get.rateLimiter.permits": "10", "instances.Svc.Get.rateLimiter.period": "1s"}))
	_, err := resilience.Wrap(reg, "Svc.Get", ok, resilience.RateLimiter())
	require.NoError(t, err)
	lim := lookup[*ratelimit.Limiter](t, reg, ratelimit.Layer, "Svc.Get")

	fromProperties, err := resilience.LoadProperties(strings.NewReader(
		"instances.Svc.Get.rateLimiter.permits = 20\ninstances.Svc.Get.rateLimiter.period = 1s\n"))
	require.NoError(t, err)
	require.NoError(t, reg.Reload(fromProperties))
	assert.Equal(t, ratelimit.Config{Permits: 20, Period: time.Second}, lim.Config())

	fromYAML, err := resilience.LoadYAML(strings.NewReader(
		"instances:\n  Svc.Get:\n    rateLimiter:\n      permits: 30\n      period: 2s\n"))
	require.NoError(t, err)
	require.NoError(t, reg.Reload(fromYAML))
	assert.Equal(t, ratelimit.Config{Permits: 30, Period: 2 * time.Second}, lim.Config())

	fromEnv, err := resilience.FromEnviron([]string{
		"R4C_INSTANCES_Svc__Get_RATELIMITER_PERMITS=40", "R4C_INSTANCES_Svc__Get_RATELIMITER_MAXWAIT=10ms", "HOME=/root"})
	require.NoError(t, err)
	require.NoError(t, reg.Reload(fromYAML, fromEnv), "the file, then the environment over it")
	assert.Equal(t, ratelimit.Config{Permits: 40, Period: 2 * time.Second, MaxWait: 10 * time.Millisecond}, lim.Config())

	require.NoError(t, reg.Reload(fromProperties))
	assert.Equal(t, ratelimit.Config{Permits: 20, Period: time.Second}, lim.Config(), "a key left out falls back")
}

// SPEC RC-3: the registry's listeners receive a reload's ConfigChanged events, naming the
// changed attributes, before Reload returns, once the registry is free: a listener may
// look an instance up.
func TestRC3_ReloadEventsReachTheRegistrysListeners(t *testing.T) {
	props := map[string]string{"defaults.rateLimiter.permits": "5", "defaults.rateLimiter.period": "1s"}
	var seen []string
	var reg *resilience.Registry
	reg, _ = newRegistry(t, resilience.WithProperties(props), resilience.WithEventListener(func(e policy.Event) {
		if e.Kind != policy.ConfigChanged {
			return
		}
		lim, err := reg.RateLimiter(e.Instance) // the registry is not locked
		require.NoError(t, err)
		seen = append(seen, fmt.Sprintf("%s %v permits=%d", e.Instance, e.Changed, lim.Snapshot().Permits))
	}))
	var own []policy.Event
	for _, id := range []string{"A", "B"} {
		_, err := resilience.Wrap(reg, id, ok, resilience.RateLimiter(ratelimit.OnEvent(func(e policy.Event) { own = append(own, e) })))
		require.NoError(t, err)
	}
	require.NoError(t, reg.Reload(with(props, map[string]string{"defaults.rateLimiter.permits": "8", "defaults.rateLimiter.maxWait": "1s"})))
	assert.Equal(t, []string{"A [maxWait permits] permits=8", "B [maxWait permits] permits=8"}, seen)
	require.Len(t, own, 2, "a listener set in code receives them too")
	assert.Equal(t, policy.ConfigChanged, own[0].Kind)
}

// Reload of a nil registry is R4C-REG-010; a source with a bad key is refused before
// anything is looked at.
func TestReload_NilRegistryAndBadSources(t *testing.T) {
	var nilReg *resilience.Registry
	requireCode(t, nilReg.Reload(nil), r4c.BadSpec)

	reg, _ := newRegistry(t)
	requireCode(t, reg.Reload(map[string]string{"instances..rateLimiter.permits": "1"}), r4c.UnknownKey)
	require.NoError(t, reg.Reload(), "no keys at all")
}

// SPEC RC-6: UnusedKeys follows the keys in force: after a reload, the new keys no
// instance uses.
func TestReload_UnusedKeysFollowTheNewKeys(t *testing.T) {
	reg, _ := newRegistry(t, resilience.WithProperties(map[string]string{"defaults.rateLimiter.period": "1s"}))
	_, err := resilience.Wrap(reg, "A", ok, resilience.RateLimiter(ratelimit.Permits(1)))
	require.NoError(t, err)
	assert.Empty(t, reg.UnusedKeys())
	require.NoError(t, reg.Reload(map[string]string{
		"defaults.rateLimiter.period":          "1s",
		"instances.Typo.rateLimiter.permits":   "2",
		"instances.A.rateLimiter.maxWait":      "5ms",
		"instances.Unwrapped.bulkhead.maxWait": "1s",
	}))
	assert.Equal(t, []string{"instances.Typo.rateLimiter.permits", "instances.Unwrapped.bulkhead.maxWait"}, reg.UnusedKeys())
	assert.Equal(t, 5*time.Millisecond, lookup[*ratelimit.Limiter](t, reg, ratelimit.Layer, "A").Config().MaxWait)
}

// SPEC RC-1, RC-5: reloads race with calls through every live policy, with wraps that
// share an instance by name, and with snapshots: every wrap succeeds (a wrap sees either
// the old keys and instances or the new ones, never a mix), calls see one configuration
// or the other, and the race detector finds nothing.
func TestRC5_ReloadsRaceWithCallsAndWraps(t *testing.T) {
	keys := func(permits, maxConcurrent, attempts int, d string) map[string]string {
		return map[string]string{
			"defaults.rateLimiter.period":                  "1s",
			"defaults.rateLimiter.permits":                 fmt.Sprint(permits),
			"defaults.bulkhead.maxConcurrent":              fmt.Sprint(maxConcurrent),
			"defaults.retry.maxAttempts":                   fmt.Sprint(attempts),
			"defaults.retry.delay":                         "0s",
			"instances.Svc.Call.timeout.duration":          d, // the option in code wins over defaults.
			"defaults.circuitBreaker.failureRateThreshold": fmt.Sprint(50 + 10*attempts),
			"instances.Shared.Other.rateLimiter.maxWait":   "0s",
			"instances.Unwrapped.rateLimiter.permits":      "1",
			"instances.Svc.Call.circuitBreaker.waitInOpen": "1s",
		}
	}
	one, two := keys(1000, 4, 2, "1s"), keys(2000, 8, 3, "2s")
	var changed atomic.Int64
	reg, clk := newRegistry(t, resilience.WithProperties(one), resilience.WithEventListener(func(e policy.Event) {
		if e.Kind == policy.ConfigChanged {
			changed.Add(1)
		}
	}))
	specs := []resilience.Spec{resilience.Retry(), resilience.CircuitBreaker(), resilience.RateLimiter(ratelimit.Name("shared")),
		resilience.Timeout(time.Second), resilience.Bulkhead()}
	call, err := resilience.Wrap(reg, "Svc.Call", ok, specs...)
	require.NoError(t, err)

	const callers, reloads, wraps = 4, 50, 50
	ctx := context.Background()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range callers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, _ = call(ctx)
			}
		})
	}
	wg.Go(func() {
		for i := range wraps {
			_, err := resilience.Wrap(reg, fmt.Sprintf("Shared.%d", i), ok, resilience.RateLimiter(ratelimit.Name("shared")))
			assert.NoError(t, err)
			_ = reg.Snapshot()
		}
	})
	for i := range reloads {
		props := one
		if i%2 == 0 {
			props = two
		}
		require.NoError(t, reg.Reload(props))
		clk.Advance(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	assert.EqualValues(t, reloads*5, changed.Load(), "each reload changes the five instances")
	assert.Equal(t, 1000, lookup[*ratelimit.Limiter](t, reg, ratelimit.Layer, "shared").Config().Permits)
	assert.Equal(t, []string{"instances.Shared.Other.rateLimiter.maxWait", "instances.Unwrapped.rateLimiter.permits"}, reg.UnusedKeys())
}

// A rejection published to one registry listener: the cost of the registry's dispatch,
// which holds a Reload's events back.
func BenchmarkRejectedWithListener(b *testing.B) {
	var n atomic.Int64
	reg, _ := newRegistry(b, resilience.WithEventListener(func(policy.Event) { n.Add(1) }))
	call, err := resilience.Wrap(reg, "Search", ok, resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Hour)))
	require.NoError(b, err)
	ctx := context.Background()
	_, _ = call(ctx)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := call(ctx); err == nil {
			b.Fatal("admitted")
		}
	}
}

// A reload of 100 wrapped functions, each with a limiter, a retry and a timeout, that
// changes every limiter.
func BenchmarkReload100Functions(b *testing.B) {
	one := map[string]string{"defaults.rateLimiter.permits": "10", "defaults.rateLimiter.period": "1s"}
	two := map[string]string{"defaults.rateLimiter.permits": "20", "defaults.rateLimiter.period": "1s"}
	reg, _ := newRegistry(b, resilience.WithProperties(one))
	for i := range 100 {
		_, err := resilience.Wrap(reg, fmt.Sprint("Svc.", i), ok, resilience.Retry(), resilience.RateLimiter(), resilience.Timeout(time.Second))
		require.NoError(b, err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		props := one
		if i%2 == 0 {
			props = two
		}
		i++
		if err := reg.Reload(props); err != nil {
			b.Fatal(err)
		}
	}
}

// The registry's dispatch of events, which holds a Reload's ConfigChanged events back,
// allocates nothing: a rejection published to a registry listener costs no allocation.
func TestReload_DispatchAllocatesNothing(t *testing.T) {
	var n atomic.Int64
	reg, _ := newRegistry(t, resilience.WithEventListener(func(policy.Event) { n.Add(1) }))
	call, err := resilience.Wrap(reg, "Search", ok, resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Hour)))
	require.NoError(t, err)
	ctx := context.Background()
	_, _ = call(ctx)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := call(ctx); err == nil {
			t.Fatal("admitted")
		}
	})
	assert.Zero(t, allocs)
	assert.EqualValues(t, 101, n.Load(), "every rejection reached the listener")
}

// reloadWithin runs reg.Reload(props) and fails the test if it does not return within
// 10s: a deadlock.
func reloadWithin(t *testing.T, reg *resilience.Registry, props map[string]string) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- reg.Reload(props) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Reload deadlocked")
	}
}

// SPEC RC-3, RC-6: what a reload's change sets off reaches the registry's listeners with
// the registry unlocked and in the order it happened: a breaker disabled by a reload
// publishes ConfigChanged, then its transition, and a listener of the transition may
// look the breaker up.
func TestRC3_ReloadTransitionsReachListenersUnlockedAndInOrder(t *testing.T) {
	var reg *resilience.Registry
	var kinds []policy.EventKind
	reg, _ = newRegistry(t, resilience.WithEventListener(func(e policy.Event) {
		kinds = append(kinds, e.Kind)
		if e.Kind == circuitbreaker.EventTransition {
			_, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, e.Instance)
			assert.NoError(t, err)
		}
	}))
	_, err := resilience.Wrap(reg, "A", ok, resilience.CircuitBreaker())
	require.NoError(t, err)
	reloadWithin(t, reg, map[string]string{"instances.A.circuitBreaker.enabled": "false"})
	assert.Equal(t, []policy.EventKind{policy.ConfigChanged, circuitbreaker.EventTransition}, kinds)
}

// SPEC RC-6: a reload that raises a bulkhead's limit starts its waiting calls on the
// reload's goroutine, with the registry unlocked: a call that looks the registry up does
// not deadlock.
func TestRC6_ReloadStartsWaitingCallsUnlocked(t *testing.T) {
	props := map[string]string{"instances.Pool.bulkhead.maxConcurrent": "1", "instances.Pool.bulkhead.maxWait": "10s"}
	reg, _ := newRegistry(t, resilience.WithProperties(props))
	calls := contracttest.NewCalls()
	var started atomic.Int32
	call, err := resilience.WrapAsync1(reg, "Pool", func(ctx context.Context, i int) *async.Future[string] {
		if started.Add(1) == 2 {
			_, err := resilience.Lookup[*bulkhead.Bulkhead](reg, bulkhead.Layer, "Pool")
			assert.NoError(t, err)
		}
		return calls.Next(ctx, i)
	}, resilience.Bulkhead())
	require.NoError(t, err)
	ctx := context.Background()
	_ = call(ctx, 1)
	_ = call(ctx, 2) // waits for a slot
	require.EqualValues(t, 1, started.Load())
	reloadWithin(t, reg, with(props, map[string]string{"instances.Pool.bulkhead.maxConcurrent": "2"}))
	assert.EqualValues(t, 2, started.Load(), "the raise started the waiting call")
	calls.Finish(1)
	calls.Finish(2)
}
