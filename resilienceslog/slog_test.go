package resilienceslog_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/recording"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/fallback"
	"github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/policy/observe"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resilienceslog"
)

// noTime drops the record's time, so that lines compare exactly.
func noTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// jsonLogger returns a logger writing JSON lines without time to the buffer, from level.
func jsonLogger(level slog.Leveler) (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: level, ReplaceAttr: noTime})), &buf
}

// assertLines checks that buf holds exactly the JSON lines want, in order, each compared
// as parsed JSON (every field, level and message included), and empties it.
func assertLines(t *testing.T, buf *bytes.Buffer, want ...string) {
	t.Helper()
	var got []string
	sc := bufio.NewScanner(buf)
	for sc.Scan() {
		got = append(got, sc.Text())
	}
	require.NoError(t, sc.Err())
	require.Len(t, got, len(want), "lines: %q", got)
	for i := range want {
		assert.JSONEq(t, want[i], got[i], "line %d", i)
	}
	buf.Reset()
}

// newRegistry returns a registry on a manual clock whose events go to the listener.
func newRegistry(t *testing.T, listener func(policy.Event)) (*resilience.Registry, *clock.Manual) {
	t.Helper()
	clk := clock.NewManual()
	reg, err := resilience.NewRegistry(resilience.WithClock(clk), resilience.WithEventListener(listener))
	require.NoError(t, err)
	return reg, clk
}

func ok(context.Context) (string, error) { return "ok", nil }

// SPEC OB-4: a limiter's rejection is a warning and its wait a debug record, each with
// the kind's name as message and the event's fields in the group "event".
func TestOB4_ListenerRateLimiter(t *testing.T) {
	logger, buf := jsonLogger(slog.LevelDebug)
	reg, clk := newRegistry(t, resilienceslog.Listener(logger))
	ctx := context.Background()

	search, err := resilience.Wrap(reg, "Search", ok,
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)))
	require.NoError(t, err)
	_, err = search(ctx)
	require.NoError(t, err)
	clk.Advance(250 * time.Millisecond)
	_, err = search(ctx)
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	assertLines(t, buf,
		`{"level":"WARN","msg":"RateLimiterRejected","event":{"kind":"RateLimiterRejected","instance":"Search",`+
			`"at":250000000,"retry_after":750000000,"err":"ratelimit: rate limit exceeded for \"Search\""}}`)

	geo, err := resilience.Wrap(reg, "Geo", ok,
		resilience.RateLimiter(ratelimit.Permits(2), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Second)))
	require.NoError(t, err)
	for range 3 {
		_, err = geo(ctx)
		require.NoError(t, err)
	}
	assert.Equal(t, 750*time.Millisecond, clk.Now(), "the third call waited for its permit")
	assertLines(t, buf,
		`{"level":"DEBUG","msg":"RateLimiterWaited","event":{"kind":"RateLimiterWaited","instance":"Geo",`+
			`"at":250000000,"wait":500000000}}`)
}

// SPEC OB-4: a breaker's transitions to open are warnings, to half-open and closed
// information; its rejection is a warning with the time until a trial call.
func TestOB4_ListenerCircuitBreaker(t *testing.T) {
	logger, buf := jsonLogger(slog.LevelDebug)
	reg, clk := newRegistry(t, resilienceslog.Listener(logger))
	ctx := context.Background()
	boom := errors.New("boom")
	fail := true
	pay, err := resilience.Wrap(reg, "Pay", func(context.Context) (string, error) {
		if fail {
			return "", boom
		}
		return "paid", nil
	}, resilience.CircuitBreaker(circuitbreaker.SlidingWindowSize(2), circuitbreaker.MinimumCalls(2),
		circuitbreaker.WaitInOpen(10*time.Second), circuitbreaker.PermittedInHalfOpen(1)))
	require.NoError(t, err)

	for range 2 {
		_, err = pay(ctx)
		require.ErrorIs(t, err, boom)
	}
	clk.Advance(4 * time.Second)
	_, err = pay(ctx)
	require.ErrorIs(t, err, circuitbreaker.ErrOpen)
	assertLines(t, buf,
		`{"level":"WARN","msg":"CircuitBreakerTransition","event":{"kind":"CircuitBreakerTransition","instance":"Pay",`+
			`"at":0,"from":"closed","to":"open"}}`,
		`{"level":"WARN","msg":"CircuitBreakerRejected","event":{"kind":"CircuitBreakerRejected","instance":"Pay",`+
			`"at":4000000000,"retry_after":6000000000,`+
			`"err":"circuitbreaker: circuit breaker \"Pay\" is open and does not permit the call"}}`)

	clk.Advance(6 * time.Second)
	_, err = pay(ctx) // the trial fails: open again
	require.ErrorIs(t, err, boom)
	clk.Advance(10 * time.Second)
	fail = false
	_, err = pay(ctx) // the trial succeeds: closed
	require.NoError(t, err)
	assertLines(t, buf,
		`{"level":"INFO","msg":"CircuitBreakerTransition","event":{"kind":"CircuitBreakerTransition","instance":"Pay",`+
			`"at":10000000000,"from":"open","to":"half-open"}}`,
		`{"level":"WARN","msg":"CircuitBreakerTransition","event":{"kind":"CircuitBreakerTransition","instance":"Pay",`+
			`"at":10000000000,"from":"half-open","to":"open"}}`,
		`{"level":"INFO","msg":"CircuitBreakerTransition","event":{"kind":"CircuitBreakerTransition","instance":"Pay",`+
			`"at":20000000000,"from":"open","to":"half-open"}}`,
		`{"level":"INFO","msg":"CircuitBreakerTransition","event":{"kind":"CircuitBreakerTransition","instance":"Pay",`+
			`"at":20000000000,"from":"half-open","to":"closed"}}`)

	h, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "Pay")
	require.NoError(t, err)
	_ = h.TransitionTo(circuitbreaker.ForcedOpen)
	assertLines(t, buf,
		`{"level":"WARN","msg":"CircuitBreakerTransition","event":{"kind":"CircuitBreakerTransition","instance":"Pay",`+
			`"at":20000000000,"from":"closed","to":"forced-open"}}`)
}

// SPEC OB-4: a retry's attempts are debug records; its exhaustion and its abort are
// warnings, with the attempt and the error.
func TestOB4_ListenerRetry(t *testing.T) {
	logger, buf := jsonLogger(slog.LevelDebug)
	reg, _ := newRegistry(t, resilienceslog.Listener(logger))
	ctx := context.Background()
	boom, fatal := errors.New("boom"), errors.New("fatal")
	var next error
	fetch, err := resilience.Wrap(reg, "Fetch", func(context.Context) (string, error) { return "", next },
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(100*time.Millisecond), retry.AbortOn(fatal)))
	require.NoError(t, err)

	next = boom
	_, err = fetch(ctx)
	require.ErrorIs(t, err, boom)
	assertLines(t, buf,
		`{"level":"DEBUG","msg":"RetryAttempt","event":{"kind":"RetryAttempt","instance":"Fetch",`+
			`"at":0,"wait":100000000,"attempt":1,"err":"boom"}}`,
		`{"level":"DEBUG","msg":"RetryAttempt","event":{"kind":"RetryAttempt","instance":"Fetch",`+
			`"at":100000000,"wait":100000000,"attempt":2,"err":"boom"}}`,
		`{"level":"WARN","msg":"RetryExhausted","event":{"kind":"RetryExhausted","instance":"Fetch",`+
			`"at":200000000,"attempt":3,"err":"boom"}}`)

	next = fatal
	_, err = fetch(ctx)
	require.ErrorIs(t, err, fatal)
	assertLines(t, buf,
		`{"level":"WARN","msg":"RetryAborted","event":{"kind":"RetryAborted","instance":"Fetch",`+
			`"at":200000000,"attempt":1,"err":"fatal"}}`)
}

// capture is a handler that keeps every record from its level on.
type capture struct {
	level slog.Level
	mu    sync.Mutex
	recs  []slog.Record
	ctxs  []context.Context
}

func (h *capture) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *capture) Handle(ctx context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r.Clone())
	h.ctxs = append(h.ctxs, ctx)
	return nil
}

func (h *capture) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *capture) WithGroup(string) slog.Handler      { return h }

func (h *capture) records() []slog.Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]slog.Record(nil), h.recs...)
}

// SPEC OB-4: each kind has its level; a breaker's transition has the level of the state
// it enters; an unknown kind is information. The message is the kind's name and the one
// attribute the event's group.
func TestOB4_DefaultLevels(t *testing.T) {
	debug, info, warn, errorLevel := slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError
	transition := func(to string) policy.Event {
		return policy.Event{Kind: circuitbreaker.EventTransition, Attrs: policy.EventAttrs{
			slog.String("from", "closed"), slog.String("to", to)}}
	}
	adaptiveWaited := adaptivelimit.EventWaited
	require.NotZero(t, adaptiveWaited)
	for _, tc := range []struct {
		e    policy.Event
		want slog.Level
	}{
		{policy.Event{Kind: ratelimit.EventWaited}, debug},
		{policy.Event{Kind: bulkhead.EventWaited}, debug},
		{policy.Event{Kind: adaptiveWaited}, debug},
		{policy.Event{Kind: retry.EventAttempt}, debug},
		{policy.Event{Kind: hedge.EventHedged}, debug},
		{policy.Event{Kind: hedge.EventWon}, debug},
		{policy.Event{Kind: hedge.EventSkipped}, debug},
		{policy.Event{Kind: adaptivelimit.EventChanged}, debug},
		{policy.Event{Kind: policy.ConfigChanged}, info},
		{policy.Event{Kind: fallback.EventApplied}, info},
		{policy.Event{Kind: backend.EventRecovered}, info},
		{transition(circuitbreaker.Closed), info},
		{transition(circuitbreaker.HalfOpen), info},
		{transition(circuitbreaker.Disabled), info},
		{policy.Event{Kind: ratelimit.EventRejected}, warn},
		{policy.Event{Kind: circuitbreaker.EventRejected}, warn},
		{policy.Event{Kind: bulkhead.EventRejected}, warn},
		{policy.Event{Kind: adaptivelimit.EventRejected}, warn},
		{policy.Event{Kind: retry.EventExhausted}, warn},
		{policy.Event{Kind: retry.EventAborted}, warn},
		{policy.Event{Kind: timeout.EventExceeded}, warn},
		{policy.Event{Kind: hedge.EventFailed}, warn},
		{transition(circuitbreaker.Open), warn},
		{transition(circuitbreaker.ForcedOpen), warn},
		{policy.Event{Kind: backend.EventFailed}, errorLevel},
		{policy.Event{Kind: backend.EventKeyFailed}, errorLevel},
		{policy.Event{Kind: policy.EventKind(99)}, info},
		{policy.Event{}, info},
	} {
		name := tc.e.Kind.String()
		if to := tc.e.Attr("to"); to.Any() != nil {
			name += "_to_" + to.String()
		}
		t.Run(name, func(t *testing.T) {
			h := &capture{level: slog.LevelDebug - 4}
			tc.e.Instance = "x"
			resilienceslog.Listener(slog.New(h))(tc.e)
			recs := h.records()
			require.Len(t, recs, 1)
			assert.Equal(t, tc.want, recs[0].Level)
			assert.Equal(t, tc.e.Kind.String(), recs[0].Message)
			require.Equal(t, 1, recs[0].NumAttrs())
			recs[0].Attrs(func(a slog.Attr) bool {
				assert.Equal(t, "event", a.Key)
				assert.Equal(t, slog.KindGroup, a.Value.Kind())
				assert.Equal(t, tc.e.LogValue().String(), a.Value.String())
				return true
			})
		})
	}
}

// SPEC OB-4: Level sets one kind's level (every breaker transition, for
// circuitbreaker.EventTransition); the later of two for a kind wins; the handler filters at
// the level set.
func TestOB4_LevelOverride(t *testing.T) {
	logger, buf := jsonLogger(slog.LevelInfo)
	log := resilienceslog.Listener(logger,
		resilienceslog.Level(ratelimit.EventRejected, slog.LevelWarn),
		resilienceslog.Level(ratelimit.EventRejected, slog.LevelError),
		resilienceslog.Level(ratelimit.EventWaited, slog.LevelInfo),
		resilienceslog.Level(circuitbreaker.EventTransition, slog.LevelDebug),
		resilienceslog.Level(policy.EventKind(99), slog.LevelWarn),
		nil)
	log(policy.Event{Kind: ratelimit.EventRejected, Instance: "a"})
	log(policy.Event{Kind: ratelimit.EventWaited, Instance: "b", Wait: time.Millisecond})
	log(policy.Event{Kind: circuitbreaker.EventTransition, Instance: "c", Attrs: policy.EventAttrs{
		slog.String("from", "closed"), slog.String("to", "open")}})
	log(policy.Event{Kind: retry.EventExhausted, Instance: "d", Attempt: 3})
	log(policy.Event{Kind: policy.EventKind(99), Instance: "e"})
	assertLines(t, buf,
		`{"level":"ERROR","msg":"RateLimiterRejected","event":{"kind":"RateLimiterRejected","instance":"a","at":0}}`,
		`{"level":"INFO","msg":"RateLimiterWaited","event":{"kind":"RateLimiterWaited","instance":"b","at":0,"wait":1000000}}`,
		`{"level":"WARN","msg":"RetryExhausted","event":{"kind":"RetryExhausted","instance":"d","at":0,"attempt":3}}`,
		`{"level":"WARN","msg":"EventKind(99)","event":{"kind":"EventKind(99)","instance":"e","at":0}}`)
}

// SPEC OB-4: an event below the handler's level builds nothing: no allocation, nothing
// written, for the listener and for the observer's recorder alike.
func TestOB4_FilteredEventAllocatesNothing(t *testing.T) {
	logger, buf := jsonLogger(slog.LevelError)
	e := policy.Event{Kind: ratelimit.EventRejected, Instance: "Search", At: time.Second,
		RetryAfter: time.Second, Err: errors.New("rejected"), Changed: []string{"x"}}
	listener := resilienceslog.Listener(logger)
	rec := resilienceslog.Observer(logger).Instrument(ratelimit.Layer, "Search")
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(100, func() { listener(e) }))
	assert.Zero(t, testing.AllocsPerRun(100, func() { rec.Event(ctx, e) }))
	assert.Zero(t, buf.Len())

	// The same event at a level the handler takes is written.
	resilienceslog.Listener(logger, resilienceslog.Level(ratelimit.EventRejected, slog.LevelError))(e)
	assert.NotZero(t, buf.Len())
}

// SPEC OB-4: a nil logger logs to slog.Default() as it is when the event is published.
func TestOB4_NilLoggerLogsToDefault(t *testing.T) {
	listener := resilienceslog.Listener(nil)
	rec := resilienceslog.Observer(nil).Instrument(retry.Layer, "Fetch")
	logger, buf := jsonLogger(slog.LevelDebug)
	old := slog.Default()
	slog.SetDefault(logger)
	t.Cleanup(func() { slog.SetDefault(old) })

	listener(policy.Event{Kind: retry.EventAttempt, Instance: "Fetch", Attempt: 1})
	rec.Event(context.Background(), policy.Event{Kind: retry.EventExhausted, Instance: "Fetch", Attempt: 2})
	assertLines(t, buf,
		`{"level":"DEBUG","msg":"RetryAttempt","event":{"kind":"RetryAttempt","instance":"Fetch","at":0,"attempt":1}}`,
		`{"level":"WARN","msg":"RetryExhausted","event":{"kind":"RetryExhausted","instance":"Fetch","at":0,"attempt":2}}`)
}

type traceKey struct{}

// traceHandler adds the trace id that the context carries, as a tracing bridge would.
type traceHandler struct{ slog.Handler }

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if id, ok := ctx.Value(traceKey{}).(string); ok {
		r.AddAttrs(slog.String("trace_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

// SPEC OB-4: the observer's records carry the context of the call that caused the
// event, so the handler sees what it holds; outcomes are not logged, and the whole calls
// get no recorder.
func TestOB4_ObserverLogsWithCallContext(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(traceHandler{slog.NewJSONHandler(&buf, &slog.HandlerOptions{ReplaceAttr: noTime})})
	clk := clock.NewManual()
	reg, err := resilience.NewRegistry(resilience.WithClock(clk),
		resilience.WithObserver(resilienceslog.Observer(logger)))
	require.NoError(t, err)
	boom := errors.New("boom")
	pay, err := resilience.Wrap(reg, "Pay", func(context.Context) (string, error) { return "", boom },
		resilience.CircuitBreaker(circuitbreaker.SlidingWindowSize(2), circuitbreaker.MinimumCalls(2),
			circuitbreaker.WaitInOpen(10*time.Second)))
	require.NoError(t, err)

	for _, id := range []string{"t-1", "t-2", "t-3"} {
		_, err = pay(context.WithValue(context.Background(), traceKey{}, id))
		require.Error(t, err)
	}
	assertLines(t, &buf,
		`{"level":"WARN","msg":"CircuitBreakerTransition","event":{"kind":"CircuitBreakerTransition","instance":"Pay",`+
			`"at":0,"from":"closed","to":"open"},"trace_id":"t-2"}`,
		`{"level":"WARN","msg":"CircuitBreakerRejected","event":{"kind":"CircuitBreakerRejected","instance":"Pay",`+
			`"at":0,"retry_after":10000000000,`+
			`"err":"circuitbreaker: circuit breaker \"Pay\" is open and does not permit the call"},"trace_id":"t-3"}`)

	o := resilienceslog.Observer(logger)
	assert.Nil(t, o.Instrument(observe.LayerCall, "Pay"))
	rec := o.Instrument(circuitbreaker.Layer, "Pay")
	require.NotNil(t, rec)
	rec.Record(context.Background(), observe.Outcome{Result: observe.ResultFailed, Err: boom})
	assert.Zero(t, buf.Len(), "an outcome is not logged")
}

// SPEC OB-4: one listener serves concurrent publishers; every event is one whole line.
func TestOB4_ListenerConcurrent(t *testing.T) {
	logger, buf := jsonLogger(slog.LevelDebug)
	listener := resilienceslog.Listener(logger, resilienceslog.Level(retry.EventAttempt, slog.LevelInfo))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				listener(policy.Event{Kind: retry.EventAttempt, Instance: "Fetch", Attempt: g*50 + i + 1})
			}
		})
	}
	wg.Wait()
	seen := map[float64]bool{}
	sc := bufio.NewScanner(buf)
	for sc.Scan() {
		var line struct {
			Level string
			Event struct{ Attempt float64 }
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line))
		assert.Equal(t, "INFO", line.Level)
		seen[line.Event.Attempt] = true
	}
	assert.Len(t, seen, 200)
}

// OB-4: the observer's recorders want no latencies, and want only the events the
// handler would log.
func TestOB4_ObserverRecordersFilter(t *testing.T) {
	logger := slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	rec := resilienceslog.Observer(logger, resilienceslog.Level(retry.EventAttempt, slog.LevelError)).Instrument(ratelimit.Layer, "x")
	assert.False(t, recording.Timed(rec))
	f, ok := rec.(recording.EventFilter)
	require.True(t, ok)
	assert.True(t, f.WantsEvent(t.Context(), ratelimit.EventRejected), "warn")
	assert.False(t, f.WantsEvent(t.Context(), ratelimit.EventWaited), "debug")
	assert.True(t, f.WantsEvent(t.Context(), retry.EventAttempt), "raised to error")
	assert.True(t, f.WantsEvent(t.Context(), circuitbreaker.EventTransition), "its level depends on the state")

	rec = resilienceslog.Observer(logger, resilienceslog.Level(circuitbreaker.EventTransition, slog.LevelInfo)).
		Instrument(circuitbreaker.Layer, "x")
	assert.False(t, rec.(recording.EventFilter).WantsEvent(t.Context(), circuitbreaker.EventTransition),
		"Level fixes the level of a kind whose level depends on the event")
}

// A kind of a policy of the user's own, whose level depends on its attribute.
var cacheEvicted = policy.RegisterEventKind(policy.EventKindInfo{Name: "CacheEvicted", Layer: "cache",
	LevelOf: func(e policy.Event) slog.Level {
		if e.Attr("forced").Equal(slog.BoolValue(true)) {
			return slog.LevelWarn
		}
		return slog.LevelDebug
	},
	Attrs: []policy.EventAttr{{Key: "forced"}, {Key: "entries"}}})

// SPEC OB-7: a kind registered by a user's policy is logged at the level it was
// registered with, with its attributes; the observer's recorders want it always, as its
// level depends on the event.
func TestOB7_OwnKindLogged(t *testing.T) {
	logger, buf := jsonLogger(slog.LevelInfo)
	log := resilienceslog.Listener(logger)
	log(policy.Event{Kind: cacheEvicted, Instance: "users", Attrs: policy.EventAttrs{slog.Bool("forced", false)}})
	log(policy.Event{Kind: cacheEvicted, Instance: "users",
		Attrs: policy.EventAttrs{slog.Bool("forced", true), slog.Int("entries", 12)}})
	assertLines(t, buf,
		`{"level":"WARN","msg":"CacheEvicted","event":{"kind":"CacheEvicted","instance":"users","at":0,"forced":true,"entries":12}}`)

	rec := resilienceslog.Observer(logger).Instrument("cache", "users")
	assert.True(t, rec.(recording.EventFilter).WantsEvent(t.Context(), cacheEvicted))
}

// SPEC LK-3, OB-4: the key that a locked spec ignores is logged once, as a warning with its
// R4C-CFG-014 error, when the instance is created.
func TestOB4_LockedOverrideWarning(t *testing.T) {
	logger, buf := jsonLogger(slog.LevelInfo)
	reg, err := resilience.NewRegistry(resilience.WithClock(clock.NewManual()),
		resilience.WithProperties(map[string]string{"instances.Search.timeout.duration": "5s"}),
		resilience.WithEventListener(resilienceslog.Listener(logger)))
	require.NoError(t, err)
	_, err = resilience.Wrap(reg, "Search", ok, resilience.Locked(resilience.Timeout(time.Second)))
	require.NoError(t, err)
	assertLines(t, buf,
		`{"level":"WARN","msg":"LockedOverrideIgnored","event":{"kind":"LockedOverrideIgnored","instance":"Search","at":0,`+
			`"err":"R4C-CFG-014: instances.Search.timeout.duration = \"5s\": ignored: the timeout of instance Search is locked, and its options in code set duration"}}`)
}
