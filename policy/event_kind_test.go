package policy_test

import (
	"errors"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/fallback"
	"github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
)

// A kind of a policy of the user's own, with attributes of its own.
var (
	cacheMissed = policy.RegisterEventKind(policy.EventKindInfo{Name: "CacheMissed", Layer: "cache",
		Level: slog.LevelWarn, SpanEvent: "app.cache.missed", Attrs: []policy.EventAttr{{Key: "tier"}, {Key: "age"}}})
	cacheEvicted = policy.RegisterEventKind(policy.EventKindInfo{Name: "CacheEvicted", Layer: "cache",
		LevelOf: func(e policy.Event) slog.Level {
			if e.Attr("forced").Equal(slog.BoolValue(true)) {
				return slog.LevelError
			}
			return slog.LevelDebug
		},
		Attrs: []policy.EventAttr{{Key: "forced"}}})
)

// SPEC OB-7: a kind registered by a user's policy is named, leveled, logged and formatted
// from what it was registered with, as a built-in one is.
func TestEventKind_OB7_OwnKind(t *testing.T) {
	assert.Equal(t, "CacheMissed", cacheMissed.String())
	info := cacheMissed.Info()
	assert.Equal(t, policy.Layer("cache"), info.Layer)
	assert.Equal(t, "app.cache.missed", info.SpanEvent)
	assert.Equal(t, []policy.EventAttr{{Key: "tier"}, {Key: "age"}}, info.Attrs)
	assert.NotEqual(t, cacheMissed, cacheEvicted)

	e := policy.Event{Kind: cacheMissed, Instance: "users", At: time.Second, Key: "u1",
		Attrs: policy.EventAttrs{slog.String("tier", "l2"), slog.Duration("age", time.Minute)}}
	assert.Equal(t, slog.LevelWarn, e.Level())
	assert.Equal(t, "l2", e.Attr("tier").String())
	assert.Equal(t, time.Minute, e.Attr("age").Duration())
	assert.Nil(t, e.Attr("absent").Any(), "an attribute the event does not carry is the zero value")
	assert.Nil(t, e.Attr("").Any(), "the empty slots are no attribute")
	assert.Equal(t, `CacheMissed users at=1s key="u1" tier=l2 age=1m0s`, e.String())
	assert.Equal(t, []string{"kind=String:CacheMissed", "instance=String:users", "at=Duration:1s",
		"key=String:u1", "tier=String:l2", "age=Duration:1m0s"}, attrs(t, e.LogValue()))

	assert.Equal(t, slog.LevelDebug, policy.Event{Kind: cacheEvicted}.Level())
	assert.Equal(t, slog.LevelError,
		policy.Event{Kind: cacheEvicted, Attrs: policy.EventAttrs{slog.Bool("forced", true)}}.Level(),
		"LevelOf decides the level of each event")
}

// SPEC OB-7: a kind that is not registered has no description, a name made of its
// number, and the level Info.
func TestEventKind_OB7_Unregistered(t *testing.T) {
	for _, k := range []policy.EventKind{0, -1, 1 << 20} {
		assert.Equal(t, policy.EventKindInfo{}, k.Info())
		assert.Equal(t, slog.LevelInfo, policy.Event{Kind: k}.Level())
	}
	assert.Equal(t, "EventKind(0)", policy.EventKind(0).String())
	assert.Equal(t, "EventKind(-1)", policy.EventKind(-1).String())
	unnamed := policy.RegisterEventKind(policy.EventKindInfo{})
	assert.Equal(t, "EventKind("+strconv.Itoa(int(unnamed))+")", unnamed.String())
}

// SPEC OB-7: the built-in kinds are registered by their policy packages, with their
// layer, their names (which logs show) and their span event names, each unique.
func TestEventKind_OB7_BuiltinKinds(t *testing.T) {
	kinds := map[policy.EventKind]policy.Layer{
		ratelimit.EventRejected: ratelimit.Layer, ratelimit.EventWaited: ratelimit.Layer,
		backend.EventFailed: ratelimit.Layer, backend.EventRecovered: ratelimit.Layer,
		backend.EventKeyFailed: ratelimit.Layer,
		retry.EventAttempt:     retry.Layer, retry.EventExhausted: retry.Layer, retry.EventAborted: retry.Layer,
		circuitbreaker.EventTransition: circuitbreaker.Layer, circuitbreaker.EventRejected: circuitbreaker.Layer,
		timeout.EventExceeded: timeout.Layer, fallback.EventApplied: fallback.Layer,
		bulkhead.EventRejected: bulkhead.Layer, bulkhead.EventWaited: bulkhead.Layer,
		hedge.EventHedged: hedge.Layer, hedge.EventWon: hedge.Layer, hedge.EventSkipped: hedge.Layer,
		hedge.EventFailed:          hedge.Layer,
		adaptivelimit.EventChanged: adaptivelimit.Layer, adaptivelimit.EventRejected: adaptivelimit.Layer,
		adaptivelimit.EventWaited: adaptivelimit.Layer,
		policy.ConfigChanged:      "",
	}
	names, spans := map[string]bool{}, map[string]bool{}
	for k, layer := range kinds {
		info := k.Info()
		assert.Equal(t, layer, info.Layer, info.Name)
		assert.False(t, names[info.Name], "unique name %s", info.Name)
		names[info.Name] = true
		if info.SpanEvent != "" {
			assert.False(t, spans[info.SpanEvent], "unique span event %s", info.SpanEvent)
			spans[info.SpanEvent] = true
		}
	}
	assert.Len(t, spans, 17, "every kind but the backend's, the limit's changes and ConfigChanged")
	wantSpans := map[policy.EventKind]string{
		ratelimit.EventRejected: "resilience.rate_limiter.rejected", ratelimit.EventWaited: "resilience.rate_limiter.waited",
		retry.EventAttempt: "resilience.retry.attempt", retry.EventExhausted: "resilience.retry.exhausted",
		retry.EventAborted:             "resilience.retry.aborted",
		circuitbreaker.EventTransition: "resilience.circuit_breaker.transition",
		circuitbreaker.EventRejected:   "resilience.circuit_breaker.rejected",
		timeout.EventExceeded:          "resilience.timeout.exceeded", fallback.EventApplied: "resilience.fallback.applied",
		bulkhead.EventRejected: "resilience.bulkhead.rejected", bulkhead.EventWaited: "resilience.bulkhead.waited",
		hedge.EventHedged: "resilience.hedge.hedged", hedge.EventWon: "resilience.hedge.won",
		hedge.EventSkipped: "resilience.hedge.skipped", hedge.EventFailed: "resilience.hedge.failed",
		adaptivelimit.EventRejected: "resilience.adaptive_limit.rejected",
		adaptivelimit.EventWaited:   "resilience.adaptive_limit.waited",
	}
	for k, want := range wantSpans {
		assert.Equal(t, want, k.Info().SpanEvent, k.String())
	}
}

// SPEC OB-7: an event with attributes of its kind's own is built, leveled and published
// without allocating.
func TestEvent_OB7_PublishAllocatesNothing(t *testing.T) {
	var got policy.Event
	l := policy.Listener(func(e policy.Event) { got = e })
	from, to := circuitbreaker.Closed, circuitbreaker.Open
	err := errors.New("boom")
	var level slog.Level
	allocs := testing.AllocsPerRun(100, func() {
		e := policy.Event{Kind: circuitbreaker.EventTransition, Instance: "cb", At: time.Second, Err: err,
			Attrs: policy.EventAttrs{slog.String("from", from), slog.String("to", to)}}
		level = e.Level()
		l(e)
	})
	assert.Zero(t, allocs)
	require.Equal(t, "open", got.Attr("to").String())
	assert.Equal(t, slog.LevelWarn, level)
}
