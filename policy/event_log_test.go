package policy_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
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

// attrs renders a group value's attributes as key=kind:value, in order, so that two
// groups compare exactly (slog.Value.Equal panics on a slice).
func attrs(t *testing.T, v slog.Value) []string {
	t.Helper()
	require.Equal(t, slog.KindGroup, v.Kind())
	var out []string
	for _, a := range v.Group() {
		out = append(out, fmt.Sprintf("%s=%s:%v", a.Key, a.Value.Kind(), a.Value.Any()))
	}
	return out
}

// SPEC OB-4: an event logs as a group of kind, instance and at, and of the fields that
// apply to its kind, with snake_case keys and typed values.
func TestEvent_OB4_LogValuePerKind(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		e    policy.Event
		want []string
	}{
		{policy.Event{Kind: ratelimit.EventRejected, Instance: "Search", At: time.Second,
			RetryAfter: 100 * time.Millisecond, Err: boom},
			[]string{"kind=String:RateLimiterRejected", "instance=String:Search", "at=Duration:1s",
				"retry_after=Duration:100ms", "err=String:boom"}},
		{policy.Event{Kind: ratelimit.EventRejected, Instance: "Search", Key: "10.0.0.1", Err: boom},
			[]string{"kind=String:RateLimiterRejected", "instance=String:Search", "at=Duration:0s",
				"key=String:10.0.0.1", "err=String:boom"}},
		{policy.Event{Kind: ratelimit.EventWaited, Instance: "Geo", At: 2 * time.Second, Wait: 200 * time.Millisecond},
			[]string{"kind=String:RateLimiterWaited", "instance=String:Geo", "at=Duration:2s", "wait=Duration:200ms"}},
		{policy.Event{Kind: retry.EventAttempt, Instance: "Fetch", Attempt: 2, Wait: time.Second, Err: boom},
			[]string{"kind=String:RetryAttempt", "instance=String:Fetch", "at=Duration:0s", "wait=Duration:1s",
				"attempt=Int64:2", "err=String:boom"}},
		{policy.Event{Kind: retry.EventExhausted, Instance: "Fetch", Attempt: 3, Err: boom},
			[]string{"kind=String:RetryExhausted", "instance=String:Fetch", "at=Duration:0s", "attempt=Int64:3",
				"err=String:boom"}},
		{policy.Event{Kind: circuitbreaker.EventTransition, Instance: "Pay", At: time.Minute, Attrs: policy.EventAttrs{slog.String("from", "closed"), slog.String("to", "open")}},
			[]string{"kind=String:CircuitBreakerTransition", "instance=String:Pay", "at=Duration:1m0s",
				"from=String:closed", "to=String:open"}},
		{policy.Event{Kind: circuitbreaker.EventRejected, Instance: "Pay", RetryAfter: 30 * time.Second, Err: boom},
			[]string{"kind=String:CircuitBreakerRejected", "instance=String:Pay", "at=Duration:0s",
				"retry_after=Duration:30s", "err=String:boom"}},
		{policy.Event{Kind: timeout.EventExceeded, Instance: "Slow", Attrs: policy.EventAttrs{slog.Duration("timeout", 2*time.Second)}, Err: boom},
			[]string{"kind=String:TimeoutExceeded", "instance=String:Slow", "at=Duration:0s", "timeout=Duration:2s",
				"err=String:boom"}},
		{policy.Event{Kind: bulkhead.EventRejected, Instance: "Pool", Wait: 50 * time.Millisecond, Err: boom},
			[]string{"kind=String:BulkheadRejected", "instance=String:Pool", "at=Duration:0s", "wait=Duration:50ms",
				"err=String:boom"}},
		{policy.Event{Kind: fallback.EventApplied, Instance: "Inventory.Get", Err: boom},
			[]string{"kind=String:FallbackApplied", "instance=String:Inventory.Get", "at=Duration:0s", "err=String:boom"}},
		{policy.Event{Kind: backend.EventFailed, Instance: "quota", Attrs: policy.EventAttrs{slog.String("node", "10.0.0.5:6379")}, Key: "tenant-1", Err: boom},
			[]string{"kind=String:RateLimiterBackendFailed", "instance=String:quota", "at=Duration:0s",
				"key=String:tenant-1", "node=String:10.0.0.5:6379", "err=String:boom"}},
		{policy.Event{Kind: backend.EventRecovered, Instance: "quota", Attrs: policy.EventAttrs{slog.String("node", "10.0.0.5:6379")}},
			[]string{"kind=String:RateLimiterBackendRecovered", "instance=String:quota", "at=Duration:0s",
				"node=String:10.0.0.5:6379"}},
		{policy.Event{Kind: hedge.EventHedged, Instance: "Get", Attempt: 2, Wait: 10 * time.Millisecond},
			[]string{"kind=String:Hedged", "instance=String:Get", "at=Duration:0s", "wait=Duration:10ms", "attempt=Int64:2"}},
		{policy.Event{Kind: adaptivelimit.EventChanged, Instance: "Db", Attrs: policy.EventAttrs{slog.Int("limit", 12), slog.Int("previous_limit", 10)}},
			[]string{"kind=String:AdaptiveLimitChanged", "instance=String:Db", "at=Duration:0s", "limit=Int64:12",
				"previous_limit=Int64:10"}},
		{policy.Event{Kind: policy.ConfigChanged, Instance: "Search", Changed: []string{"period", "permits"}},
			[]string{"kind=String:ConfigChanged", "instance=String:Search", "at=Duration:0s",
				"changed=Any:[period permits]"}},
		{policy.Event{Kind: policy.EventKind(99), Instance: "x"},
			[]string{"kind=String:EventKind(99)", "instance=String:x", "at=Duration:0s"}},
		{policy.Event{},
			[]string{"kind=String:EventKind(0)", "instance=String:", "at=Duration:0s"}},
		{policy.Event{Kind: retry.EventAttempt, Instance: "every", At: 1, Wait: 2, RetryAfter: 3, Attempt: 5, Key: "k",
			Attrs:   policy.EventAttrs{slog.String("a", "b"), slog.Int("n", 6), slog.Duration("d", 4)},
			Changed: []string{"c"}, Err: boom},
			[]string{"kind=String:RetryAttempt", "instance=String:every", "at=Duration:1ns", "wait=Duration:2ns",
				"retry_after=Duration:3ns", "attempt=Int64:5", "key=String:k", "a=String:b", "n=Int64:6",
				"d=Duration:4ns", "changed=Any:[c]", "err=String:boom"}},
	} {
		t.Run(tc.e.Kind.String(), func(t *testing.T) {
			assert.Equal(t, tc.want, attrs(t, tc.e.LogValue()))
		})
	}
}

// SPEC OB-4: Event is a slog.LogValuer, so slog.Any logs it as its group; the text and
// JSON handlers write the lines the documentation shows.
func TestEvent_OB4_LogValuerThroughHandlers(t *testing.T) {
	var _ slog.LogValuer = policy.Event{}
	e := policy.Event{Kind: ratelimit.EventRejected, Instance: "SearchAPI.Search", At: time.Second,
		RetryAfter: 100 * time.Millisecond, Err: errors.New(`ratelimit: rate limit exceeded for "SearchAPI.Search"`)}
	noTime := func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}

	var text bytes.Buffer
	slog.New(slog.NewTextHandler(&text, &slog.HandlerOptions{ReplaceAttr: noTime})).Warn("rejected", "event", e)
	assert.Equal(t, `level=WARN msg=rejected event.kind=RateLimiterRejected event.instance=SearchAPI.Search `+
		`event.at=1s event.retry_after=100ms event.err="ratelimit: rate limit exceeded for \"SearchAPI.Search\""`+"\n",
		text.String())

	var js bytes.Buffer
	e.Kind, e.Changed = policy.ConfigChanged, []string{"period", "permits"}
	slog.New(slog.NewJSONHandler(&js, &slog.HandlerOptions{ReplaceAttr: noTime})).Info("changed", slog.Any("event", e))
	assert.Equal(t, `{"level":"INFO","msg":"changed","event":{"kind":"ConfigChanged","instance":"SearchAPI.Search",`+
		`"at":1000000000,"retry_after":100000000,"changed":["period","permits"],`+
		`"err":"ratelimit: rate limit exceeded for \"SearchAPI.Search\""}}`+"\n", js.String())
	assert.False(t, strings.Contains(js.String(), `"wait"`), "a zero field is left out")
}

// SPEC OB-4: building the group of an event without Err or Changed allocates once: its
// attributes.
func TestEvent_OB4_LogValueAllocations(t *testing.T) {
	e := policy.Event{Kind: retry.EventAttempt, Instance: "Fetch", At: time.Second, Attempt: 2, Wait: time.Second}
	var v slog.Value
	assert.Equal(t, 1.0, testing.AllocsPerRun(100, func() { v = e.LogValue() }))
	assert.Len(t, v.Group(), 5)
}

func BenchmarkEventLogValue(b *testing.B) {
	e := policy.Event{Kind: ratelimit.EventRejected, Instance: "SearchAPI.Search", At: time.Second,
		RetryAfter: 100 * time.Millisecond, Err: errors.New("rejected")}
	b.ReportAllocs()
	for b.Loop() {
		_ = e.LogValue()
	}
}
